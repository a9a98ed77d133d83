// Fuzz target: the index file parser (index::parse) and the whole load path (IndexStore::load of a
// file holding the bytes).
//
// Input: a would-be index file (index/FORMAT.md). Seeds: index files of the seed bzip2 files, as
// the builder makes them. Random mutations almost never keep the checksum right, so each input is
// parsed twice: as it is, and with its checksum recomputed (which reaches the record checks).
//
// Checked: an index that parses serializes back to exactly the same bytes (one of an older version,
// to a current one that parses to the same index), and holds what readers rely on (records
// ordered, chained and inside the source, sizes its levels allow, offsets mapped back to their
// block, the damage count, newline counts a block can hold and a line count they add up to, and
// line starts that LineMap finds inside the file); IndexStore::load of a file with those bytes, for the
// source identity they name, gives the same index, or rejects it exactly when parse does or the
// file is larger than any index of that source can be.
//
// fuzz-args: -dict=index.dict -max_len=16384
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "index/block_index.h"
#include "index/index_format.h"
#include "index/index_store.h"
#include "index/line_map.h"
#include "index/xxh3.h"

namespace {

using namespace mibz2;

constexpr size_t kChecksumOffset = 120;

// The bytes with the checksum FORMAT.md defines written in.
std::vector<uint8_t> with_checksum(std::span<const uint8_t> bytes) {
  std::vector<uint8_t> b(bytes.begin(), bytes.end());
  index::Xxh3 h;
  h.update(b.data(), kChecksumOffset);
  h.update(b.data() + index::kHeaderSize, b.size() - index::kHeaderSize);
  const uint64_t sum = h.digest();
  std::memcpy(b.data() + kChecksumOffset, &sum, sizeof sum);
  return b;
}

// The line counts (FORMAT.md, version 3) and what LineMap makes of them.
void check_lines(const index::BlockIndex& idx) {
  uint64_t newlines = 0;
  bool all_known = idx.has_line_counts();
  if (idx.has_line_counts())
    for (size_t i = 0; i < idx.blocks.size(); ++i) {
      const uint32_t n = idx.newlines[i];
      const std::string which = "record " + std::to_string(i) + ": ";
      FUZZ_CHECK(!idx.blocks[i].damaged() || n == index::kUnknownNewlines, which + "a damaged block with a count");
      FUZZ_CHECK(n == index::kUnknownNewlines || n <= idx.block_size(i), which + "more newlines than bytes");
      if (n == index::kUnknownNewlines) all_known = false;
      else newlines += n;
    }
  const index::LineMap lines(idx);
  const std::optional<uint64_t> count = lines.line_count();
  if (count && idx.has_line_counts())
    FUZZ_CHECK(all_known && (*count == newlines || *count == newlines + 1), "a line count the counts do not give");
  FUZZ_CHECK(count.has_value() == lines.unknown_why().empty(), "unknown_why disagrees with line_count");
  FUZZ_CHECK(lines.known_end() <= idx.decompressed_size, "known lines end past the file");
  // Line starts, reading blocks of nothing but newlines (what any block could hold): inside the
  // file or refused, never a crash.
  const index::LineMap::ReadAt newline_bytes = [](uint64_t, size_t length, uint8_t* out) {
    std::memset(out, '\n', length);
    return static_cast<ssize_t>(length);
  };
  for (uint64_t n : {uint64_t{1}, uint64_t{2}, count ? *count / 2 + 1 : uint64_t{3}}) {
    const base::Result<uint64_t> start = lines.line_start(n, newline_bytes);
    FUZZ_CHECK(!start.ok() || *start <= idx.decompressed_size, "a line start past the file");
  }
}

void check_index(const index::BlockIndex& idx, std::span<const uint8_t> bytes) {
  const std::vector<uint8_t> again = index::serialize(idx);
  uint32_t version = 0;
  std::memcpy(&version, bytes.data() + 8, sizeof version);
  if (version == index::kFormatVersion) {
    FUZZ_CHECK(again.size() == bytes.size() && std::equal(again.begin(), again.end(), bytes.begin()),
               "a parsed index does not serialize to its own bytes");
  } else {
    // An older version is written as the current one, without line counts: the same index.
    const base::Result<index::BlockIndex> current = index::parse(again);
    FUZZ_CHECK(current.ok(), "an older index written again does not parse: " + current.status().message());
    FUZZ_CHECK(index::serialize(*current) == again, "an older index written again does not round-trip");
    FUZZ_CHECK(current->blocks.size() == idx.blocks.size() && current->decompressed_size == idx.decompressed_size &&
                   current->line_count == idx.line_count,
               "an older index written again is another index");
  }
  check_lines(idx);
  const uint64_t source_bits = idx.source.size * 8;
  uint32_t damaged = 0;
  for (size_t i = 0; i < idx.blocks.size(); ++i) {
    const index::BlockRecord& r = idx.blocks[i];
    const std::string which = "record " + std::to_string(i) + ": ";
    FUZZ_CHECK(r.level() >= 1 && r.level() <= 9, which + "level");
    FUZZ_CHECK(r.start_bit() <= source_bits && r.bit_length <= source_bits - r.start_bit(), which + "outside the source");
    FUZZ_CHECK(i == 0 || r.start_bit() >= idx.blocks[i - 1].end_bit(), which + "overlaps the one before");
    FUZZ_CHECK(i > 0 || r.out_offset == 0, which + "the first does not start at 0");
    FUZZ_CHECK(r.out_offset < idx.decompressed_size, which + "starts past the end");
    const uint64_t size = idx.block_size(i);
    FUZZ_CHECK(size >= 1 && size <= index::max_block_output(r.level()), which + "size " + std::to_string(size));
    FUZZ_CHECK(!r.nominal_size() || size == index::nominal_block_size(r.level()), which + "nominal size");
    FUZZ_CHECK(idx.block_at(r.out_offset) == i && idx.block_at(r.out_offset + size - 1) == i,
               which + "its offsets map to another block");
    if (r.damaged()) ++damaged;
    (void)index::describe_block(idx, i);
  }
  FUZZ_CHECK(damaged == idx.damaged_blocks, "damaged_blocks");
  FUZZ_CHECK(index::damage_report(idx).size() == damaged, "damage report lines");
  FUZZ_CHECK(!idx.blocks.empty() || idx.decompressed_size == 0, "no blocks but a size");
}

struct Store {
  std::string dir;
  index::IndexStore store;
  explicit Store(std::string d) : dir(d), store(std::move(d)) {}
  ~Store() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

Store& store() {
  static Store s([] {
    std::string t = (std::getenv("TMPDIR") ? std::string(std::getenv("TMPDIR")) : std::string("/tmp")) +
                    "/mibz2-fuzz-index.XXXXXX";
    if (!mkdtemp(t.data())) {
      std::perror("mkdtemp");
      std::abort();
    }
    return t;
  }());
  return s;
}

void write_file(const std::string& path, std::span<const uint8_t> bytes) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  FUZZ_CHECK(fd >= 0, "cannot create " + path);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    FUZZ_CHECK(n > 0, "cannot write " + path);
    done += static_cast<size_t>(n);
  }
  close(fd);
}

// The identity the header names (so that a valid index is current), or a small file's.
index::SourceIdentity identity_in(std::span<const uint8_t> b) {
  index::SourceIdentity id;
  auto get = [&](size_t off) {
    uint64_t v = 0;
    if (off + 8 <= b.size()) std::memcpy(&v, b.data() + off, 8);
    return v;
  };
  id.size = b.size() >= 48 ? get(16) : 1000;
  id.fingerprint = get(24);
  id.mtime_ns = get(32);
  id.inode = get(40);
  return id;
}

void check_load(std::span<const uint8_t> bytes, bool parsed, const index::BlockIndex& idx) {
  Store& s = store();
  const index::SourceIdentity id = parsed ? idx.source : identity_in(bytes);
  // Index files are named by the content identity they are looked up with (FORMAT.md).
  const std::string path = s.store.path_for(id);
  write_file(path, bytes);
  const index::LoadedIndex result = s.store.load(id);
  const index::IndexStore::Load got = result.load;
  const index::BlockIndex& loaded = result.index;
  const std::string reason = result.why.message();
  unlink(path.c_str());
  const bool fits = bytes.size() <= index::max_index_file_size(id.size);
  if (parsed && fits) {
    FUZZ_CHECK(got == index::IndexStore::Load::kCurrent, "a valid index for this source does not load: " + reason);
    FUZZ_CHECK(index::serialize(loaded) == index::serialize(idx), "the loaded index differs from the parsed one");
  } else {
    FUZZ_CHECK(got == index::IndexStore::Load::kInvalid,
               std::string(parsed ? "an index too large for its source" : "an index parse rejects") +
                   " is not rejected as invalid: " + std::to_string(static_cast<int>(got)) + " " + reason);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t size) {
  static fuzz::GuardedBuffer guarded;
  const std::span<const uint8_t> raw = guarded.place({input, size});
  if (const base::Result<index::BlockIndex> idx = index::parse(raw); idx.ok()) check_index(*idx, raw);

  if (size < index::kHeaderSize) return 0;
  const std::vector<uint8_t> fixed = with_checksum(raw);
  const base::Result<index::BlockIndex> fixed_idx = index::parse(fixed);
  if (fixed_idx.ok()) check_index(*fixed_idx, fixed);
  check_load(fixed, fixed_idx.ok(), fixed_idx.ok() ? *fixed_idx : index::BlockIndex());
  return 0;
}
