// mibz2-corpus-gen: deterministic test and benchmark inputs that look and compress like real dumps.
//
//   mibz2-corpus-gen --kind wikidata|wikipedia --size SIZE [--seed N] [--out FILE]
//
// wikidata:  a Wikidata-like JSON dump: "[" on the first line, one entity per line ending in ","
//            (except the last), "]" on the last line.
// wikipedia: a MediaWiki XML export (<mediawiki>, <siteinfo>, <page>s with wikitext revisions).
//
// The same kind, seed and size give the same bytes on every machine: the generator uses its own
// PRNG and integer arithmetic only (no std distributions, no libm), and no locale. The output is
// exactly SIZE bytes; the end is filled with small entities and one padded entity so the document
// stays well formed (only sizes below a few hundred bytes, or below the XML header, are cut short).
// Not installed; scripts/make-corpus drives it.
//
// The pieces: random.h (the PRNG and Zipf choice everything derives from), text.{h,cc} (numbers,
// UTF-8, invented vocabularies, sentences), model.{h,cc} (the vocabulary of each language),
// sink.h (the output and its byte count), wikidata.{h,cc} and wikipedia.{h,cc} (the two kinds of
// document), and this file (the command line).
#include <getopt.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "base/settings.h"
#include "model.h"
#include "sink.h"
#include "wikidata.h"
#include "wikipedia.h"

namespace {

using namespace mibz2::corpus;

// The largest SIZE: far above any corpus, and low enough that no size arithmetic can overflow.
constexpr uint64_t kMaxSize = uint64_t{1} << 50;

void usage(FILE* f) {
  std::fprintf(f,
               "usage: mibz2-corpus-gen --kind wikidata|wikipedia --size SIZE [--seed N] [--out FILE]\n"
               "Writes a deterministic Wikidata-like JSON dump or Wikipedia-like XML export of exactly SIZE\n"
               "bytes (a number of bytes, or with K, M, G or T: powers of 1024) to FILE or standard output.\n"
               "  -k, --kind KIND  wikidata (default) or wikipedia\n"
               "  -s, --size SIZE  output size in bytes, e.g. 200M\n"
               "  -S, --seed N     seed (default 1); same kind, seed and size give the same bytes\n"
               "  -o, --out FILE   output file (default: standard output)\n"
               "  -h, --help       this help\n");
}

struct Options {
  std::string kind = "wikidata";
  std::string out_path;  // empty: standard output
  uint64_t size = 0;
  uint64_t seed = 1;
};

// Parses the command line into *o. Returns -1 to go on, or the exit status (after the help, or
// after saying what is wrong).
int parse_options(int argc, char** argv, Options* o) {
  static const option kOptions[] = {
      {"kind", required_argument, nullptr, 'k'}, {"size", required_argument, nullptr, 's'},
      {"seed", required_argument, nullptr, 'S'}, {"out", required_argument, nullptr, 'o'},
      {"help", no_argument, nullptr, 'h'},       {nullptr, 0, nullptr, 0},
  };
  bool have_size = false;
  int c;
  while ((c = getopt_long(argc, argv, "k:s:S:o:h", kOptions, nullptr)) != -1) {
    switch (c) {
      case 'k': o->kind = optarg; break;
      case 's':
        if (const auto size = mibz2::base::parse_size(optarg); size && *size <= kMaxSize) {
          o->size = *size;
        } else {
          std::fprintf(stderr, "mibz2-corpus-gen: --size: %s\n", mibz2::base::not_a_size(optarg).c_str());
          return 1;
        }
        have_size = true;
        break;
      case 'S': {
        char* end = nullptr;
        errno = 0;
        o->seed = std::strtoull(optarg, &end, 10);
        if (!*optarg || *end || errno || *optarg == '-') {
          std::fprintf(stderr, "mibz2-corpus-gen: bad seed '%s'\n", optarg);
          return 1;
        }
        break;
      }
      case 'o': o->out_path = optarg; break;
      case 'h': usage(stdout); return 0;
      default: usage(stderr); return 1;
    }
  }
  if (optind != argc || !have_size || (o->kind != "wikidata" && o->kind != "wikipedia")) {
    usage(stderr);
    return 1;
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (const int status = parse_options(argc, argv, &opt); status >= 0) return status;
  FILE* f = stdout;
  if (!opt.out_path.empty()) {
    f = std::fopen(opt.out_path.c_str(), "wb");
    if (!f) {
      std::fprintf(stderr, "mibz2-corpus-gen: %s: %s\n", opt.out_path.c_str(), std::strerror(errno));
      return 1;
    }
  }
  const Model model;
  Sink sink(f);
  const bool ok = opt.kind == "wikidata" ? write_wikidata(model, opt.seed, opt.size, sink)
                                         : write_wikipedia(model, opt.seed, opt.size, sink);
  if (!ok || std::fflush(f) != 0 || (f != stdout && std::fclose(f) != 0)) {
    std::fprintf(stderr, "mibz2-corpus-gen: writing %s: %s\n",
                 opt.out_path.empty() ? "standard output" : opt.out_path.c_str(), std::strerror(errno));
    return 1;
  }
  if (sink.total() != opt.size) {
    std::fprintf(stderr, "mibz2-corpus-gen: internal error: wrote %llu bytes, not %llu\n",
                 static_cast<unsigned long long>(sink.total()), static_cast<unsigned long long>(opt.size));
    return 1;
  }
  return 0;
}
