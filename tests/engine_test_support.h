// Helpers of the engine tests: indexed source files on disk and reads checked against the original
// bytes (engines' options and waiting with a deadline: catalog_test_support.h, test_support.h).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "catalog_test_support.h"
#include "engine/engine.h"
#include "engine/reader.h"
#include "io/source.h"

namespace mibz2::test {

// A .bz2 file on disk with its index (identity filled, so Engine::open accepts it).
struct Source {
  std::string name;
  std::string path;
  Bytes plain;
  Bytes file;
  std::shared_ptr<const index::BlockIndex> index;
  std::vector<std::string> notes;

  uint64_t block_start(size_t b) const { return index->blocks[b].out_offset; }
  uint64_t block_size(size_t b) const { return index->block_size(b); }
  size_t blocks() const { return index->blocks.size(); }
};

// Writes `file` under `dir` and indexes it (index kept in dir/idx-NAME: a store of its own, since
// stores find indexes by content and some tests make files that share their size and fingerprint
// with another, a damaged twin, whose own index they mean to have).
inline Source write_source(const TempDir& dir, const std::string& name, Bytes plain, Bytes file) {
  Source s;
  s.name = name;
  s.plain = std::move(plain);
  s.file = std::move(file);
  s.path = dir.write(name, s.file).string();
  index::IndexStore store((dir.path() / ("idx-" + name)).string());
  const catalog::IndexStatus o = obtain_guarded(s.path, store, 2);
  EXPECT_TRUE(o.ready()) << name << ": " << o.error;
  s.index = o.index;
  s.notes = o.origin.notes;
  return s;
}

inline Source make_source(const TempDir& dir, const std::string& name, Bytes plain, int level) {
  Bytes file = libbz2_compress(plain, level);
  return write_source(dir, name, std::move(plain), std::move(file));
}

// Level-1 files of a few MB (blocks of ~100 kB, many of them), built once per test program.
struct EngineCorpus {
  TempDir dir;
  std::vector<Source> files;
};
inline const EngineCorpus& engine_corpus() {
  static EngineCorpus c;
  static std::once_flag once;
  std::call_once(once, [] {
    c.files.push_back(make_source(c.dir, "text.bz2", text_bytes(scaled(3000000, 600000), 31), 1));
    c.files.push_back(make_source(c.dir, "runs.bz2", runs_bytes(scaled(3000000, 600000), 32), 1));
    c.files.push_back(make_source(c.dir, "mixed.bz2", mixed_bytes(scaled(2500000, 500000), 33), 1));
    // Two streams.
    const Bytes a = text_bytes(scaled(1000000, 250000), 34), b = mixed_bytes(scaled(1000000, 250000), 35);
    const Bytes fa = libbz2_compress(a, 1), fb = libbz2_compress(b, 1);
    c.files.push_back(write_source(c.dir, "two_streams.bz2", concat({&a, &b}), concat({&fa, &fb})));
  });
  return c;
}
inline const Source& text_source() { return engine_corpus().files[0]; }

// Engine::open of `path` (opened and identified here, as the Catalog does) with `index`, or why it
// refuses.
inline base::Result<std::shared_ptr<engine::Reader>> try_open(engine::Engine& e, uint64_t file_id,
                                                              const std::string& path,
                                                              std::shared_ptr<const index::BlockIndex> index) {
  io::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return base::Status::os_error(errno, std::strerror(errno));
  const base::Result<io::SourceStamp> stamp = io::stamp_of(fd.get());
  MIBZ2_FORWARD_IF_ERROR(stamp);
  auto bytes = std::make_unique<io::FdBytes>(fd.get(), stamp->size);
  auto source = std::make_unique<io::FileSource>(std::move(fd), *stamp, std::move(bytes));
  const base::Result<index::SourceIdentity> id = index::identify_source(*source);
  MIBZ2_FORWARD_IF_ERROR(id);
  return e.open(file_id, path, std::move(source), *id, std::move(index));
}

inline std::shared_ptr<engine::Reader> open_reader(engine::Engine& e, uint64_t file_id, const Source& s) {
  base::Result<std::shared_ptr<engine::Reader>> r = try_open(e, file_id, s.path, s.index);
  EXPECT_TRUE(r.ok()) << s.name << ": " << r.status();
  return r.ok() ? std::move(r).value() : nullptr;
}

// Reads [offset, offset + length) and compares with the original; returns false (after a test
// failure naming the range) when they differ.
inline bool read_and_check(engine::Reader& r, const Source& s, uint64_t offset, size_t length) {
  std::vector<uint8_t> buf(length);
  const ssize_t n = r.read(offset, length, buf.data());
  const uint64_t total = s.plain.size();
  const uint64_t want = offset >= total ? 0 : std::min<uint64_t>(length, total - offset);
  if (n < 0 || static_cast<uint64_t>(n) != want) {
    ADD_FAILURE() << s.name << ": read(" << offset << ", " << length << ") returned " << n << ", expected " << want;
    return false;
  }
  if (want && std::memcmp(buf.data(), s.plain.data() + offset, want) != 0) {
    size_t i = 0;
    while (buf[i] == s.plain[offset + i]) ++i;
    ADD_FAILURE() << s.name << ": read(" << offset << ", " << length << ") differs from the original at byte "
                  << offset + i;
    return false;
  }
  return true;
}

inline uint64_t stat(const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); }

}  // namespace mibz2::test
