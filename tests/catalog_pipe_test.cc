// Sources read once (Catalog::stream_once over io::PipeBytes, what `mibz2 cat -` does): a real
// pipe fed in small writes gives the same blocks, bytes and index as the file, intact or damaged,
// while the bytes kept stay those the decoders have in flight; and the catalog's summary (the
// mount root's user.mibz2fs.index) and counters, with builds held back by the test hook.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <stop_token>
#include <thread>
#include <vector>

#include "catalog_test_support.h"
#include "io/pipe_bytes.h"

namespace mibz2::test {
namespace {

struct Piped {
  index::BuildResult result;
  Bytes bytes;              // the undamaged blocks' bytes, in order
  size_t blocks = 0;
  uint64_t most_kept = 0;   // the most bytes io::PipeBytes held at a block
};

// The consumer's view of a block before through_pipe keeps it, with whether the writer has
// written the whole input by then.
using BlockHook = std::function<void(const index::BlockStream::Block&, const std::atomic<bool>& all_written)>;

// `data` written into a pipe in writes of `piece` bytes by a thread, decoded by stream_once on
// `threads` decoders, releasing each block's start as it arrives (as mibz2 cat does).
Piped through_pipe(const Bytes& data, unsigned threads, size_t piece, const BlockHook& on_block = {}) {
  int fds[2];
  EXPECT_EQ(pipe2(fds, O_CLOEXEC), 0);
  std::atomic<bool> all_written{false};
  std::thread writer([&] {
    size_t at = 0;
    for (; at < data.size(); at += piece) {
      const size_t n = std::min(piece, data.size() - at);
      if (write(fds[1], data.data() + at, n) != static_cast<ssize_t>(n)) break;  // the reader stopped
    }
    all_written = at >= data.size();
    close(fds[1]);
  });
  Piped p;
  {
    CatalogAt on("", threads);
    catalog::Catalog& catalog = on.catalog;
    io::PipeBytes input(fds[0]);
    auto done = std::async(std::launch::async, [&] {
      return catalog.stream_once(input, [&](const index::BlockStream::Block& b) {
        if (on_block) on_block(b, all_written);
        input.release_before(b.record.start_bit() / 8);
        p.most_kept = std::max(p.most_kept, input.bytes_kept());
        ++p.blocks;
        if (!b.damaged()) p.bytes.insert(p.bytes.end(), b.bytes.data(), b.bytes.data() + b.bytes.size());
        return true;
      });
    });
    if (done.wait_for(kBuildTimeout) != std::future_status::ready) {
      std::fprintf(stderr, "FATAL: stream_once did not finish\n");
      std::abort();
    }
    p.result = done.get();
  }
  // Whatever the build left unread (trailing garbage) is drained so that the writer ends.
  char sink[65536];
  while (read(fds[0], sink, sizeof sink) > 0) {
  }
  writer.join();
  close(fds[0]);
  return p;
}

TEST(CatalogPipeConcurrent, APipeGivesTheFilesBlocksAndIndex) {
  std::vector<Variant> inputs(corpus().begin(), corpus().end());
  const Bytes& base = corpus().front().file;
  Bytes flipped = base;
  flip_bit(flipped, flipped.size() * 8 / 2);
  inputs.push_back({"bit flipped", {}, flipped});
  inputs.push_back({"cut", {}, Bytes(base.begin(), base.begin() + static_cast<std::ptrdiff_t>(base.size() / 2))});
  Bytes garbage = base;
  const Bytes tail = to_bytes("trailing garbage");
  garbage.insert(garbage.end(), tail.begin(), tail.end());
  inputs.push_back({"trailing garbage", {}, garbage});
  inputs.push_back({"empty", {}, {}});
  inputs.push_back({"not bzip2", {}, to_bytes("plain text, not bzip2\n")});
  for (const Variant& v : inputs) {
    SCOPED_TRACE(v.name);
    const index::BuildResult want = build_guarded(v.file, 2);
    // (Fewer configurations under sanitizers, where every build is several times slower.)
    for (const unsigned threads : kSanitized ? std::vector<unsigned>{3} : std::vector<unsigned>{1, 3}) {
      for (const size_t piece : kSanitized ? std::vector<size_t>{4093} : std::vector<size_t>{4093, 1 << 20}) {
        SCOPED_TRACE(std::to_string(threads) + " threads, writes of " + std::to_string(piece));
        const Piped p = through_pipe(v.file, threads, piece);
        ASSERT_EQ(p.result.ok(), want.ok()) << p.result.error << " / " << want.error;
        if (!want.ok()) {
          EXPECT_EQ(p.result.error.message(), want.error.message()); EXPECT_EQ(p.result.error.code(), want.error.code());
          continue;
        }
        const index::BlockIndex& got = p.result.index;
        EXPECT_EQ(got.blocks.size(), want.index.blocks.size());
        EXPECT_EQ(p.blocks, want.index.blocks.size());
        EXPECT_EQ(got.decompressed_size, want.index.decompressed_size);
        EXPECT_EQ(got.damaged_blocks, want.index.damaged_blocks);
        EXPECT_EQ(got.truncated_at_bit, want.index.truncated_at_bit);
        EXPECT_EQ(got.stream_count, want.index.stream_count);
        EXPECT_EQ(got.trailing_bytes != 0, want.index.trailing_bytes != 0);
        for (size_t i = 0; i < std::min(got.blocks.size(), want.index.blocks.size()); ++i) {
          EXPECT_EQ(got.blocks[i].start_bit(), want.index.blocks[i].start_bit()) << "block " << i;
          EXPECT_EQ(got.blocks[i].flags, want.index.blocks[i].flags) << "block " << i;
        }
        if (!v.plain.empty()) {
          EXPECT_TRUE(same_bytes(p.bytes, v.plain));
        }
        // Never more than the input, and for an input larger than the build's reach (a scan
        // piece of up to 1 MiB and the decoders' window), less.
        EXPECT_LE(p.most_kept, v.file.size());
      }
    }
  }
}

// While the consumer still holds the first block, the decoders go on as far as a stream's budget
// of decoded bytes allows, as they do for a file: here through the whole input. The pipe's stream
// once got the window's count of candidates (8) as its bytes, so one decoded block waiting made
// every decoder stop; the input was then read no further than the scan's first pieces.
TEST(CatalogPipeConcurrent, DecodersWorkAheadOfASlowConsumerAsForAFile) {
  // 6 MB that hardly compress: 60 blocks of 100 kB, more input than one scan piece.
  const Bytes plain = random_bytes(6 << 20, 51);
  const Bytes file = libbz2_compress(plain, 1);
  ASSERT_GT(file.size(), size_t{5} << 20);
  bool read_through_while_held = false;
  const Piped p = through_pipe(file, 2, 1 << 16, [&](const index::BlockStream::Block& b, const std::atomic<bool>& all_written) {
    if (b.number != 0) return;
    // The whole input is read only if the decoders work ahead of this consumer. (The bound is for
    // a regression: it ends a wait that would otherwise never end.)
    read_through_while_held = eventually([&] { return all_written.load(); }, std::chrono::seconds(kSanitized ? 120 : 30));
  });
  EXPECT_TRUE(p.result.ok()) << p.result.error;
  EXPECT_TRUE(read_through_while_held) << "the decoders stopped while the consumer held block 0";
  EXPECT_TRUE(same_bytes(p.bytes, plain));
}

// The catalog's view of all its files while builds are held back (hold_builds_while), never
// waiting: two building at 0% (as many background builds at once as decoders), the third queued,
// the bytes to do their sizes; a stopped wait
// leaves everything as it was; once released, all ready and counted, and a second catalog loads
// them from the store.
TEST(CatalogConcurrent, TheSummaryCountsFilesByStateWithoutWaiting) {
  TempStore t;
  std::vector<std::string> paths;
  uint64_t sizes = 0;
  for (int i = 0; i < 3; ++i) {
    const Bytes file = libbz2_compress(text_bytes(300000 + i, 40 + i), 1);
    sizes += file.size();
    std::string name = "s";
    name += std::to_string(i);
    name += ".bz2";
    paths.push_back(t.dir.write(name, file).string());
  }
  {
    CatalogOn on(t.store);
    catalog::Catalog& catalog = on.catalog;
    std::atomic<bool> held{true};
    catalog.hold_builds_while([&] { return held.load(); });
    std::vector<catalog::FileRef> files;
    for (const std::string& p : paths) files.push_back(catalog.add(p));
    for (const auto& f : files) catalog.prepare(f, catalog::Catalog::Need::kSoon);
    catalog::CatalogSummary s = catalog.summary();
    EXPECT_EQ(s.building, 2u);
    EXPECT_EQ(s.queued, 1u);
    EXPECT_EQ(s.ready + s.failed, 0u);
    EXPECT_EQ(s.bytes_to_do, sizes);
    EXPECT_EQ(s.bytes_done, 0u);
    EXPECT_LT(s.eta(), 0) << "no rate yet: the ETA is unknown";
    EXPECT_NE(s.describe().find("eta_s=unknown"), std::string::npos) << s.describe();
    for (const auto& f : files) {
      const std::string d = catalog.status(f).describe();
      EXPECT_TRUE(d == "queued" || d == "building 0%") << d;
    }
    // A stopped wait ends, and changes nothing.
    std::stop_source stop;
    std::thread stopper([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      stop.request_stop();
    });
    EXPECT_FALSE(catalog.wait(files[2], stop.get_token()));
    stopper.join();
    EXPECT_TRUE(catalog.stopped_waiting(files[2], stop.get_token()));
    s = catalog.summary();
    EXPECT_EQ(s.building + s.queued, 3u);
    held = false;
    for (const auto& f : files) settle_guarded(catalog, f);
    s = catalog.summary();
    EXPECT_EQ(s.ready, 3u);
    EXPECT_EQ(s.building + s.queued + s.failed, 0u);
    EXPECT_EQ(s.bytes_to_do, 0u);
    EXPECT_EQ(s.built, 3u);
    EXPECT_EQ(s.loaded, 0u);
    EXPECT_EQ(s.bytes_indexed, sizes);
    EXPECT_GT(s.build_seconds, 0);
    EXPECT_NE(s.counters().find("indexes_built=3 "), std::string::npos) << s.counters();
  }
  CatalogOn next(t.store);
  catalog::Catalog& again = next.catalog;
  std::vector<catalog::FileRef> kept;  // the summary counts the entries someone holds
  for (const std::string& p : paths) {
    kept.push_back(again.add(p));
    again.prepare(kept.back(), catalog::Catalog::Need::kSoon);
    EXPECT_TRUE(again.status(kept.back()).ready());
  }
  const catalog::CatalogSummary s = again.summary();
  EXPECT_EQ(s.loaded, 3u);
  EXPECT_EQ(s.built, 0u);
  EXPECT_EQ(s.ready, 3u);
}

}  // namespace
}  // namespace mibz2::test
