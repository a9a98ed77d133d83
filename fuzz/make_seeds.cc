// Writes the seed corpora of the fuzz targets (the build runs it; nothing of it is committed):
//
//   mibz2-fuzz-seeds DIR
//
// makes DIR/<target>/<seed> for every target of fuzz/: bzip2 files of every level and shape made
// with libbz2 and by hand (tests/test_support.h), damaged ones, index files the builder makes of
// them, command lines and values. Deterministic: the same files on every run.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "index/block_index.h"
#include "index/index_builder.h"
#include "index/index_format.h"
#include "index/xxh3.h"
#include "index_test_support.h"
#include "io/source_bytes.h"
#include "test_support.h"

namespace {

using namespace mibz2;
using test::Bytes;
namespace fsys = std::filesystem;

Bytes text(const std::string& s) { return Bytes(s.begin(), s.end()); }

// Arguments joined with NUL bytes, as the mount_options target splits them.
Bytes argv_bytes(const std::vector<std::string>& args) {
  Bytes b;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) b.push_back(0);
    b.insert(b.end(), args[i].begin(), args[i].end());
  }
  return b;
}

struct Named {
  std::string name;
  Bytes bytes;
};

// Long, highly compressible input: many blocks in few compressed bytes (a level-1 block holds
// 100000 bytes before RLE1).
Bytes numbered_lines(size_t n) {
  Bytes b;
  for (size_t i = 0; b.size() < n; ++i) {
    const std::string line = "line " + std::to_string(i % 1000) + " of the seed\n";
    b.insert(b.end(), line.begin(), line.end());
  }
  b.resize(n);
  return b;
}

std::vector<Named> bzip2_files() {
  std::vector<Named> v;
  auto add = [&](std::string name, Bytes b) { v.push_back({std::move(name), std::move(b)}); };
  const Bytes none;
  for (int level = 1; level <= 9; ++level)
    add("level" + std::to_string(level), test::libbz2_compress(test::text_bytes(2000 + 1000 * level, level), level));
  add("empty_stream9", test::libbz2_compress(none, 9));
  add("one_byte", test::libbz2_compress(text("x"), 1));
  add("all_byte_values", test::libbz2_compress(test::all_byte_values(2, 11), 5));
  add("runs", test::libbz2_compress(test::runs_bytes(40000, 12), 1));
  add("long_run", test::libbz2_compress(test::repeated_byte(300000, 'a'), 1));
  add("random_six_tables", test::libbz2_compress(test::random_bytes(6000, 13), 9));
  add("text_6_tables", test::libbz2_compress(test::text_bytes(30000, 14), 9));
  const Bytes multi = test::libbz2_compress(numbered_lines(250000), 1);
  add("multi_block_level1", multi);
  {
    const Bytes a = test::libbz2_compress(test::text_bytes(3000, 15), 1);
    const Bytes e = test::libbz2_compress(none, 9);
    const Bytes b = test::libbz2_compress(test::runs_bytes(5000, 16), 9);
    add("multistream", test::concat({&a, &e, &b}));
  }
  const Bytes small = test::libbz2_compress(test::text_bytes(5000, 17), 6);
  {
    Bytes g = small;
    for (char c : std::string("trailing garbage")) g.push_back(static_cast<uint8_t>(c));
    add("trailing_garbage", g);
    Bytes h = small;
    for (char c : std::string("BZh")) h.push_back(static_cast<uint8_t>(c));
    add("trailing_header_prefix", h);
    Bytes z = small;
    for (char c : std::string("BZh9")) z.push_back(static_cast<uint8_t>(c));
    z.resize(z.size() + 16, 0);
    add("trailing_header_and_zeros", z);
  }
  add("truncated_half", Bytes(small.begin(), small.begin() + static_cast<long>(small.size() / 2)));
  add("truncated_in_end_marker", Bytes(small.begin(), small.end() - 6));
  {
    Bytes c = small;
    test::flip_bit(c, 32 + 48 + 5);  // the stored block CRC
    add("block_crc_mismatch", c);
    Bytes s = small;
    test::flip_bit(s, s.size() * 8 - 12);  // the combined CRC
    add("stream_crc_mismatch", s);
    Bytes m = small;
    test::flip_bit(m, m.size() * 8 / 2);  // somewhere in the symbols
    add("bit_flip_middle", m);
    Bytes t = small;
    test::flip_bit(t, 32 + 48 + 32 + 1 + 24 + 3);  // the symbol map
    add("bit_flip_tables", t);
  }
  {
    Bytes m = multi;  // the second of three blocks damaged
    test::flip_bit(m, m.size() * 8 / 2);
    add("multi_block_damaged", m);
  }
  // Hand-made blocks (tests/test_support.h): what libbz2 never writes.
  {
    test::BlockSpec r(test::text_bytes(1500, 18));
    r.randomised = true;
    add("randomised_block", test::make_stream(3, {r}));
    test::BlockSpec six(test::text_bytes(1500, 19));
    six.tables = 6;
    add("six_flat_tables", test::make_stream(2, {six}));
    test::BlockSpec bad(test::text_bytes(500, 20));
    bad.orig_ptr = 100000;
    add("bad_orig_ptr", test::make_stream(1, {bad}));
    test::BlockSpec unfinished(text("aaaa"));
    add("unfinished_run", test::make_stream(1, {unfinished}));
  }
  add("not_bzip2", text("hello, world\n"));
  add("empty_file", {});
  return v;
}

void write(const fsys::path& dir, const std::string& name, const Bytes& bytes) {
  fsys::create_directories(dir);
  test::write_file(dir / name, bytes);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const fsys::path out = argv[1];
  fsys::remove_all(out);
  const std::vector<Named> files = bzip2_files();
  size_t count = 0;
  for (const Named& f : files) {
    for (const char* target : {"bz2_stream", "bz2_vs_libbz2", "index_builder"}) write(out / target, f.name, f.bytes);
    // bz2_block: an 8-byte header (the stream's level, a bit offset: the first block) before the file.
    const int level = f.bytes.size() > 3 && f.bytes[3] >= '1' && f.bytes[3] <= '9' ? f.bytes[3] - '0' : 9;
    Bytes b = {static_cast<uint8_t>(level - 1), 0, 0, 0, 32, 0, 0, 0};
    b.insert(b.end(), f.bytes.begin(), f.bytes.end());
    write(out / "bz2_block", f.name, b);
    count += 4;

    // index_parse: the index the builder makes of it, when it makes one.
    const io::SpanBytes source(f.bytes);
    index::IndexBuilder builder(source, 4);
    test::drive_builder(builder);
    index::BuildResult r = builder.take_result();
    if (!r.ok()) continue;
    r.index.source = {f.bytes.size(), 1700000000123456789ull, 1234, index::xxh3(f.bytes.data(), f.bytes.size())};
    write(out / "index_parse", f.name + ".idx", index::serialize(r.index));
    ++count;
  }

  const std::vector<std::vector<std::string>> command_lines = {
      {"src", "mnt"},
      {"-o", "threads=2,cache_size=64M", "src", "mnt"},
      {"-o", "cache_size=1.5GiB,index_dir=/tmp/idx,log_level=warning,wait_index", "-f", "src", "mnt"},
      {"-ocache_size=1e3K", "-othreads=1024", "/", "/tmp"},
      {"-d", "-s", "src", "mnt", "extra"},
      {"-o", "max_idle_threads=4,allow_other,clone_fd", "src", "mnt"},
      {"-o", "threads=0", "src", "mnt"},
      {"-o", "log_level=debug", "-o", "index_dir=relative/dir", "src", "mnt"},
      {"--help"},
      {"-V"},
      {"--version"},
      {"-o"},
  };
  for (size_t i = 0; i < command_lines.size(); ++i)
    write(out / "mount_options", "argv" + std::to_string(i), argv_bytes(command_lines[i]));
  count += command_lines.size();

  const std::vector<std::string> values = {"4096", "64K",  "1.5M", "2GiB", "1T",  "0",   "16",  "1024",
                                           "1025", "-1",   "1e3",  "0x10", "12b", "3kb", "8 M", ""};
  for (size_t i = 0; i < values.size(); ++i) write(out / "cli_values", "value" + std::to_string(i), text(values[i]));
  count += values.size();
  std::printf("mibz2-fuzz-seeds: %zu seeds in %s\n", count, out.c_str());
  return 0;
}
