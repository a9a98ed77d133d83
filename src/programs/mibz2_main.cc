// mibz2: work with bzip2 files the way mibz2fs does, without mounting anything. Its command line
// is CLI11's: one parser for every subcommand, so that each option is declared once, and help and
// errors read the same in every subcommand. Sizes and thread counts follow the rules of
// cli_common.h, the same as mibz2fs's.
#include <cstdio>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "base/log_sink.h"
#include "base/settings.h"
#include "engine/decoder_pool.h"
#include "index/index_dir.h"
#include "programs/cli_common.h"
#include "programs/commands.h"
#include "programs/line_range.h"
#include "version.h"

namespace {

using namespace mibz2::programs;
namespace base = mibz2::base;

// The shared rules as CLI11 validators. A size is a transform: it hands on its byte count.
CLI::Validator thread_count() {
  return CLI::Validator(
      [](std::string& text) { return base::parse_threads(text) ? std::string() : base::not_a_thread_count(text); }, "", "THREADS");
}

CLI::Validator size() {
  return CLI::Validator(
      [](std::string& text) {
        const auto bytes = base::parse_size(text);
        if (!bytes) return base::not_a_size(text);
        text = std::to_string(*bytes);
        return std::string();
      },
      "", "SIZE");
}

// -j, --index-dir and the files: every command has them. Whether "-" is standard input (kDash: a
// FILE is still needed; kDashOrNone: no FILE is standard input too), as the help says.
enum class Stdin { kNo, kDash, kDashOrNone };
void add_engine_options(CLI::App* command, FileOptions* o) {
  const std::string threads_help = "decoder threads, 1 to 1024 (default: its CPUs, " +
                                   std::to_string(mibz2::engine::default_decoder_threads()) + " here)";
  command->add_option("-j,--threads", o->threads, threads_help)->type_name("N")->check(thread_count());
  command
      ->add_option("--index-dir", o->index_dir,
                   "where index files live (default: $XDG_CACHE_HOME/mibz2fs; as root /var/cache/mibz2fs; "
                   "else ~/.cache/mibz2fs)")
      ->type_name("DIR");
}
void add_file_options(CLI::App* command, FileOptions* o, Stdin stdin_too = Stdin::kNo) {
  add_engine_options(command, o);
  if (std::string(command->get_name()) != "index")
    command
        ->add_option("--index", o->index,
                     "FILE's index (one FILE only), a path or a URL, instead of its sidecar; checked on a "
                     "sample of its blocks before it is used")
        ->type_name("INDEX");
  if (stdin_too == Stdin::kDashOrNone)
    command->add_option("FILE", o->files, "the bzip2 files; '-' or none: standard input")->type_name("");
  else if (stdin_too == Stdin::kDash)
    command->add_option("FILE", o->files, "the bzip2 files, one or more; '-': standard input")->type_name("")->required();
  else
    command->add_option("FILE", o->files, "the bzip2 files, one or more")->type_name("")->required();
}

// --lines FIRST:LAST (programs/line_range.h): checked here, parsed again where it is used.
CLI::Validator line_range() {
  return CLI::Validator(
      [](std::string& text) { return parse_line_range(text) ? std::string() : not_a_line_range(text); }, "",
      "FIRST:LAST");
}

constexpr const char* kSizeRule =
    "SIZE is a number of bytes, or a number with K, M, G or T (powers of 1024; KiB and KB mean\n"
    "the same) such as 64K or 1.5G; a fraction needs a unit and is rounded down to whole bytes.";

}  // namespace

namespace mibz2::programs {

int exit_status_of(const base::Status& failure) {
  return base::is_environment(failure) ? kExitEnvironment : kExitDataError;
}

}  // namespace mibz2::programs

int main(int argc, char** argv) {
  // The commands report to the user themselves (stderr, in their own words); the engine's log is
  // for the daemon. Should it ever be turned on, it goes to stderr (never into cat's output),
  // escaped as the daemon's is (log_sink.h).
  spdlog::set_default_logger(base::escaping_logger("mibz2", std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
  spdlog::set_level(spdlog::level::off);

  CLI::App app("Decompresses, indexes, inspects, verifies and fetches bzip2 files the way mibz2fs reads them.", "mibz2");
  app.set_help_flag("-h,--help", "this help");
  app.set_version_flag("-V,--version", std::string("mibz2 ") + MIBZ2FS_VERSION, "print the version");
  app.require_subcommand(1);
  app.footer(
      "Run 'mibz2 COMMAND --help' for the options of a command.\n"
      "Exit status: 0 fine; 1 a file that cannot be opened, read or written, or bad usage;\n"
      "2 damaged, truncated or non-bzip2 input.");
  app.get_formatter()->column_width(24);
  app.get_formatter()->label("REQUIRED", "");

  CatOptions cat;
  CLI::App* cat_cmd = app.add_subcommand(
      "cat", "write the decompressed content (or a range of it), like bzip2 -dc");
  add_file_options(cat_cmd, &cat, Stdin::kDashOrNone);
  uint64_t offset = 0, length = 0;
  CLI::Option* offset_opt = cat_cmd->add_option("--offset", offset, "first decompressed byte to write (default: 0)")
                                ->type_name("SIZE")
                                ->transform(size());
  CLI::Option* length_opt =
      cat_cmd->add_option("--length", length, "how many bytes to write at most (default: to the end)")
          ->type_name("SIZE")
          ->transform(size());
  std::string lines;
  CLI::Option* lines_opt =
      cat_cmd->add_option("--lines", lines, "write lines FIRST to LAST as sed -n 'FIRST,LASTp' does; FIRST: to the end")
          ->type_name("FIRST:LAST")
          ->check(line_range());
  cat_cmd->footer(
      std::string("Writes each FILE decompressed to standard output. A file with a current block index is\n"
                  "read through the engine with read-ahead; one without is decoded in a single parallel\n"
                  "pass that stores the index on the way. --offset and --length decode only the blocks the\n"
                  "range covers (the index is built first if there is none). --lines writes the lines\n"
                  "FIRST to LAST of each FILE (from 1, inclusive; N alone is line N, FIRST: runs to\n"
                  "the end) as sed -n 'FIRST,LASTp' does, decoding only the blocks that hold them; lines\n"
                  "the index cannot number (an index made before line counts, lines after damage) are an\n"
                  "error that says so. -j 1 on a whole file streams through it on one thread and needs no\n"
                  "index. '-', or no FILE, is standard input: a stream, decoded in parallel (-j) as it\n"
                  "comes, with no index and no range; so is a FILE that is not a regular file (a fifo,\n"
                  "/dev/stdin, <(command), a device).\n\n") +
      kSizeRule);

  IndexOptions index;
  CLI::App* index_cmd = app.add_subcommand("index", "build and store the block index of files");
  add_file_options(index_cmd, &index);
  index_cmd->add_flag("-f,--force", index.force, "rebuild even when the stored index is current");
  index_cmd->add_option("-o,--output", index.output, "also write the index to OUT (one FILE only), e.g. FILE.mibz2idx")
      ->type_name("OUT");
  index_cmd->footer(
      "Builds the block index of each FILE (a full parallel decode) and stores it, so that mibz2fs\n"
      "and mibz2 cat --offset start at once. An index that cannot be stored is an error (status 1).\n"
      "--output writes it to a file of its own as well: named FILE.mibz2idx next to FILE (a sidecar),\n"
      "it is found by every mount and every copy of FILE, read-only, and checked before use.");

  InfoOptions info;
  CLI::App* info_cmd = app.add_subcommand("info", "show streams, blocks, sizes, damage and the index of files");
  add_file_options(info_cmd, &info);
  info_cmd->add_flag("--json", info.json, "one JSON object per file");
  info_cmd->footer(
      "Prints the streams, blocks, compressed and decompressed sizes, damage, and where the index\n"
      "is and whether it is current (building it first, on -j threads, if there is none).");

  FileOptions verify;
  CLI::App* verify_cmd =
      app.add_subcommand("verify", "decode everything and check every CRC; exit 2 on damage");
  add_file_options(verify_cmd, &verify, Stdin::kDash);
  verify_cmd->footer(
      "Decodes every block, checks every block and stream CRC, lists damaged blocks and refreshes\n"
      "the stored index. '-' (standard input) and a FILE that is not a regular file (a fifo, a pipe,\n"
      "a device) are verified in one pass as they come, as bzip2 -t does, and nothing is stored.\n"
      "Exit status 0 if all is intact, 2 if not.");

  FetchOptions fetch;
  CLI::App* fetch_cmd =
      app.add_subcommand("fetch", "download a remote bzip2 file and index it on the way, in one pass");
  add_engine_options(fetch_cmd, &fetch);
  fetch_cmd->add_option("URL", fetch.url, "the object: http://, https:// or s3://BUCKET/KEY")->type_name("")->required();
  fetch_cmd->add_option("FILE", fetch.file, "where to put it")->type_name("")->required();
  fetch_cmd->add_flag("-f,--force", fetch.force, "replace FILE if it exists");
  fetch_cmd->add_option("-o,--output", fetch.output, "also write the index to OUT, e.g. FILE.mibz2idx")->type_name("OUT");
  fetch_cmd->add_option("--connections", fetch.connections, "range requests in flight at once, 1 to 64 (default: 8)")
      ->type_name("N")
      ->check(CLI::Range(1, 64).description(""));
  fetch_cmd->add_flag("-q,--quiet", fetch.quiet, "no progress line and no summary; errors still said");
  fetch_cmd->footer(
      "Downloads URL to FILE with several range requests in flight (--connections), and builds its\n"
      "block index from the bytes as they arrive, on -j threads: when it ends, FILE is indexed and\n"
      "mounts at once (the index is stored as mibz2 index stores it, under FILE's identity). FILE is\n"
      "written under a temporary name beside it and renamed when whole. A failure (after retries),\n"
      "an object that changed during the download, or content that is not bzip2 leaves no FILE and\n"
      "no index. An existing FILE is refused unless --force.");

  if (argc < 2) {
    std::fputs(app.help().c_str(), stderr);
    return kExitEnvironment;
  }
  if (std::string_view(argv[1]) == "help") {
    std::fputs(app.help().c_str(), stdout);
    return kExitOk;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);  // the help of the command given, if any
    return kExitOk;
  } catch (const CLI::CallForVersion& e) {
    std::printf("%s\n", e.what());
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    const auto given = app.get_subcommands();
    if (given.empty() && argv[1][0] != '-') {
      std::fprintf(stderr, "mibz2: unknown command '%s' (try 'mibz2 --help')\n", argv[1]);
    } else {
      const std::string who = given.empty() ? "mibz2" : "mibz2 " + given.front()->get_name();
      std::string what = e.what();  // CLI11's words, in the case of ours ("The following ..." -> "the")
      if (what.size() > 1 && what[0] >= 'A' && what[0] <= 'Z' && what[1] >= 'a' && what[1] <= 'z') what[0] += 'a' - 'A';
      std::fprintf(stderr, "%s: %s (try '%s --help')\n", who.c_str(), what.c_str(), who.c_str());
    }
    return kExitEnvironment;
  }

  for (FileOptions* o : {static_cast<FileOptions*>(&cat), static_cast<FileOptions*>(&index),
                         static_cast<FileOptions*>(&info), &verify, static_cast<FileOptions*>(&fetch)})
    o->index_dir = mibz2::index::named_index_dir(o->index_dir);  // a symlink stays one: refused
  for (const FileOptions* o : {static_cast<const FileOptions*>(&cat), static_cast<const FileOptions*>(&info),
                               static_cast<const FileOptions*>(&verify)}) {
    if (!o->index.empty() && o->files.size() != 1) {
      std::fprintf(stderr, "mibz2: --index takes one FILE, not %zu (try 'mibz2 --help')\n", o->files.size());
      return kExitEnvironment;
    }
  }
  if (offset_opt->count()) cat.offset = offset;
  if (length_opt->count()) cat.length = length;
  if (lines_opt->count()) cat.lines = parse_line_range(lines);
  if (cat_cmd->parsed()) {
    if (cat.lines && (cat.offset || cat.length)) {
      std::fprintf(stderr, "mibz2 cat: --lines does not go with --offset or --length (try 'mibz2 cat --help')\n");
      return kExitEnvironment;
    }
    return cmd_cat(cat);
  }
  if (index_cmd->parsed()) {
    if (!index.output.empty() && index.files.size() != 1) {
      std::fprintf(stderr, "mibz2 index: --output takes one FILE, not %zu (try 'mibz2 index --help')\n",
                   index.files.size());
      return kExitEnvironment;
    }
    return cmd_index(index);
  }
  if (info_cmd->parsed()) return cmd_info(info);
  if (fetch_cmd->parsed()) return cmd_fetch(fetch);
  return cmd_verify(verify);
}
