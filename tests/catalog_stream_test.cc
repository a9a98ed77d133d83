// The one-pass mode of a build (Catalog::stream, IndexBuilder with a BlockStream): blocks reach the
// consumer in file order with exactly the original bytes, damaged blocks arrive flagged and empty,
// the index built on the way equals a plain build and is stored; a consumer that stops, and
// cancel(), end the build at once with nothing stored.
#include <gtest/gtest.h>

#include <filesystem>
#include <future>
#include <thread>
#include <vector>

#include "catalog_test_support.h"

namespace mibz2::test {
namespace {

struct Streamed {
  catalog::IndexStatus obtained;
  bool stopped = false;
  Bytes bytes;                  // the concatenated bytes of undamaged blocks
  std::vector<size_t> numbers;  // block numbers in the order received
  std::vector<size_t> damaged;  // blocks received as damaged
  bool damaged_with_bytes = false;
};

// Catalog::stream under a watchdog; the sink stops after `stop_after` blocks if given, and may
// dawdle to make the decoders wait for it.
Streamed stream(const std::string& path, index::IndexStore& store, unsigned threads, size_t stop_after = SIZE_MAX,
                bool slow_consumer = false) {
  Streamed s;
  auto sink = [&](const index::BlockStream::Block& b) {
    s.numbers.push_back(b.number);
    if (b.damaged()) {
      s.damaged.push_back(b.number);
      if (b.bytes.size()) s.damaged_with_bytes = true;
    } else {
      s.bytes.insert(s.bytes.end(), b.bytes.data(), b.bytes.data() + b.bytes.size());
    }
    if (slow_consumer) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const bool go_on = s.numbers.size() < stop_after;
    if (!go_on) s.stopped = true;
    return go_on;
  };
  CatalogOn on(store, threads);
  catalog::Catalog& catalog = on.catalog;
  const catalog::FileRef file = catalog.add(io::absolute_path(path));
  std::promise<void> done;
  std::future<void> finished = done.get_future();
  std::thread t([&] {
    catalog.stream(file, sink);
    done.set_value();
  });
  if (finished.wait_for(kBuildTimeout) != std::future_status::ready) {
    std::fprintf(stderr, "FATAL: Catalog::stream(%s) did not finish\n", path.c_str());
    std::abort();
  }
  t.join();
  s.obtained = catalog.status(file);
  return s;
}

void expect_in_order(const std::vector<size_t>& numbers) {
  for (size_t i = 0; i < numbers.size(); ++i) ASSERT_EQ(numbers[i], i) << "blocks out of order";
}

TEST(CatalogStreamConcurrent, EveryCorpusShapeStreamsItsBytesInOrder) {
  TempDir dir;
  index::IndexStore store((dir.path() / "idx").string());
  size_t n = 0;
  for (const Variant& v : corpus()) {
    SCOPED_TRACE(v.name);
    std::string name = std::to_string(n++);
    name += ".bz2";
    const std::string path = dir.write(name, v.file).string();
    for (unsigned threads : kSanitized ? std::vector<unsigned>{3} : std::vector<unsigned>{1, 3}) {
      const Streamed s = stream(path, store, threads);
      ASSERT_TRUE(s.obtained.ready()) << s.obtained.error;
      EXPECT_FALSE(s.stopped);
      EXPECT_TRUE(s.obtained.origin.built);
      EXPECT_TRUE(s.obtained.origin.saved) << s.obtained.origin.save_error;
      EXPECT_TRUE(same_bytes(s.bytes, v.plain));
      expect_in_order(s.numbers);
      EXPECT_TRUE(s.damaged.empty());
      // The index built on the way is the index.
      const index::BuildResult plain = build_guarded(v.file, 2);
      index::BlockIndex want = plain.index;
      want.source = s.obtained.index->source;
      EXPECT_TRUE(same_index(*s.obtained.index, want));
      EXPECT_EQ(s.numbers.size(), want.blocks.size());
      // ... and it was stored: the catalog now loads it.
      const catalog::IndexStatus loaded = obtain_guarded(path, store, 1);
      EXPECT_FALSE(loaded.origin.built);
      EXPECT_TRUE(same_index(*loaded.index, want));
    }
  }
}

TEST(CatalogStreamConcurrent, SlowConsumerHoldsTheDecodersBack) {
  // Many small blocks, a consumer slower than four decoders: backpressure, not unbounded buffering
  // (observable only as "it finishes with the right bytes" here; ASan would see the memory).
  TempDir dir;
  index::IndexStore store((dir.path() / "idx").string());
  const Bytes plain = mixed_bytes(scaled(4000000, 1000000), 5);
  const std::string path = dir.write("slow.bz2", libbz2_compress(plain, 1)).string();
  const Streamed s = stream(path, store, 4, SIZE_MAX, /*slow_consumer=*/true);
  ASSERT_TRUE(s.obtained.ready()) << s.obtained.error;
  EXPECT_TRUE(same_bytes(s.bytes, plain));
  expect_in_order(s.numbers);
}

TEST(CatalogStreamConcurrent, AConsumerBehindByTheWholeBudgetIsWokenForEachBlock) {
  // More decoded bytes than the stream holds (16 MiB a decoding thread): the decoders stop for
  // room, and only the consumer, woken for each block handed to it, makes it. Blocks of about
  // 5 MB (runs of one byte at level 1: RLE1 turns 255 bytes into 5), a slow consumer.
  TempDir dir;
  index::IndexStore store((dir.path() / "idx").string());
  const Bytes plain = repeated_byte(size_t{48} << 20, 'z');
  const std::string path = dir.write("runs.bz2", libbz2_compress(plain, 1)).string();
  for (unsigned threads : {1u, 2u}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    const Streamed s = stream(path, store, threads, SIZE_MAX, /*slow_consumer=*/true);
    ASSERT_TRUE(s.obtained.ready()) << s.obtained.error;
    EXPECT_TRUE(s.obtained.origin.built);
    EXPECT_TRUE(same_bytes(s.bytes, plain));
    expect_in_order(s.numbers);
    std::filesystem::remove_all(dir.path() / "idx");  // the next round builds again
  }
}

TEST(CatalogStreamConcurrent, DamagedBlocksArriveFlaggedAndEmpty) {
  const Bytes a = text_bytes(420000, 21), c = text_bytes(250000, 22);
  const Bytes fa = libbz2_compress(a, 1), fc = libbz2_compress(c, 2);
  const Bytes plain = concat({&a, &c});
  Bytes file = concat({&fa, &fc});
  FileLayout layout;
  ASSERT_TRUE(walk_file(file, &layout));
  const std::optional<uint64_t> crc_bit = find_crc_only_flip(file, layout.blocks[1]);
  const std::optional<uint64_t> table_bit = find_early_failure_flip(file, layout.blocks[5]);
  ASSERT_TRUE(crc_bit && table_bit);
  flip_bit(file, *crc_bit);
  flip_bit(file, *table_bit);
  TempDir dir;
  index::IndexStore store((dir.path() / "idx").string());
  const std::string path = dir.write("damaged.bz2", file).string();
  for (unsigned threads : {1u, 4u}) {
    const Streamed s = stream(path, store, threads);
    ASSERT_TRUE(s.obtained.ready()) << s.obtained.error;
    expect_in_order(s.numbers);
    EXPECT_EQ(s.damaged, (std::vector<size_t>{1, 5}));
    EXPECT_FALSE(s.damaged_with_bytes) << "a damaged block's bytes reached the consumer";
    // The good blocks' bytes, in order.
    Bytes want;
    for (size_t i = 0; i < layout.blocks.size(); ++i) {
      if (i == 1 || i == 5) continue;
      want.insert(want.end(), plain.begin() + static_cast<std::ptrdiff_t>(layout.blocks[i].out_offset),
                  plain.begin() + static_cast<std::ptrdiff_t>(layout.blocks[i].out_offset + layout.blocks[i].out_size));
    }
    EXPECT_TRUE(same_bytes(s.bytes, want));
    const index::BuildResult built = build_guarded(file, 2);
    index::BlockIndex idx = built.index;
    idx.source = s.obtained.index->source;
    EXPECT_TRUE(same_index(*s.obtained.index, idx));
    EXPECT_EQ(s.obtained.origin.notes, built.notes);
  }
}

TEST(CatalogStreamConcurrent, ConsumerThatStopsEndsTheBuildAndNothingIsStored) {
  TempDir dir;
  index::IndexStore store((dir.path() / "idx").string());
  const Bytes plain = text_bytes(scaled(3000000, 800000), 8);
  const std::string path = dir.write("stop.bz2", libbz2_compress(plain, 1)).string();
  for (size_t stop_after : {size_t{1}, size_t{3}}) {
    const Streamed s = stream(path, store, 3, stop_after);
    EXPECT_TRUE(s.stopped);
    EXPECT_EQ(s.numbers.size(), stop_after);
    EXPECT_FALSE(s.obtained.origin.saved);
    EXPECT_FALSE(std::filesystem::exists(store.path_for(identity_of(path))));
    EXPECT_TRUE(same_bytes(s.bytes, Bytes(plain.begin(), plain.begin() + static_cast<std::ptrdiff_t>(s.bytes.size()))));
  }
}

// A consumer that stops after the decoders have finished the whole file has stopped the pass all
// the same: nothing is stored. (The build used to settle, and store its index, as soon as its
// last block was decoded, whatever the consumer did after; with decoders fast enough that was
// before a consumer stopping at block 1 or 3 of 9, and ConsumerThatStops... failed.)
TEST(CatalogStreamConcurrent, AConsumerThatStopsAfterTheLastDecodeStoresNothing) {
  CatalogRig s;
  catalog::Catalog& catalog = s.catalog;
  const catalog::FileRef file = s.add("late.bz2", text_bytes(800000, 9));
  const std::string& path = file->path();
  bool decoded_all = false;
  std::promise<bool> done;
  std::future<bool> finished = done.get_future();
  std::thread t([&] {
    done.set_value(catalog.stream(file, [&](const index::BlockStream::Block&) {
      // Stop at the first block, but only once every block was decoded and resolved (the file's
      // build at 100%, or already settled).
      decoded_all = eventually([&] {
        const catalog::IndexStatus st = catalog.status(file);
        return st.settled() || (st.build_total > 0 && st.build_done == st.build_total);
      });
      return false;
    }));
  });
  if (finished.wait_for(kBuildTimeout) != std::future_status::ready) {
    std::fprintf(stderr, "FATAL: Catalog::stream(%s) did not finish\n", path.c_str());
    std::abort();
  }
  t.join();
  EXPECT_TRUE(decoded_all) << "the decoders never finished while the consumer held block 0";
  EXPECT_FALSE(finished.get()) << "stream() says the pass went through";
  const catalog::IndexStatus st = catalog.status(file);
  EXPECT_FALSE(st.ready());
  EXPECT_TRUE(base::is_stopped(st.error)) << st.describe();
  EXPECT_FALSE(std::filesystem::exists(s.store.path_for(identity_of(path))));
}

TEST(CatalogStreamConcurrent, NotBzip2ThroughAStream) {
  TempDir dir;
  index::IndexStore store((dir.path() / "idx").string());
  const std::string path = dir.write("text.bz2", to_bytes("plain text, not bzip2\n")).string();
  const Streamed s = stream(path, store, 2);
  EXPECT_FALSE(s.obtained.ready());
  EXPECT_NE(s.obtained.error.message().find("not a bzip2"), std::string::npos) << s.obtained.error;
  EXPECT_TRUE(s.numbers.empty());
  const Streamed missing = stream((dir.path() / "missing.bz2").string(), store, 2);
  EXPECT_FALSE(missing.obtained.ready());
  EXPECT_FALSE(missing.obtained.error.message().empty());
}

}  // namespace
}  // namespace mibz2::test
