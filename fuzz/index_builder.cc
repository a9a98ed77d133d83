// Fuzz target: the index builder (index::IndexBuilder) on arbitrary input, driven on one thread as
// the tests drive it (tests/index_test_support.cc drive_builder).
//
// Input: a would-be .bz2 file. Seeds: bzip2 files of every level and shape, damaged ones too.
//
// Each input is indexed twice, with a block sink (as `mibz2 cat` builds) and without one, and
// decoded by libbz2 (tests/test_support.cc libbz2_decompress, bzip2's rules). Checked:
// - both builds give the same result and index, and the sink got every block once, in order, with
//   its bytes exactly when it is sound;
// - a usable index is one the parser accepts (records chained, sizes within the format's bounds,
//   decompressed_size the sum of the blocks, damaged_blocks their count), and serialize(parse(
//   serialize(index))) gives the same bytes; its flags say what its records say;
// - where libbz2 accepts the file, the index has no damage, its size is libbz2's and its blocks'
//   bytes are libbz2's bytes; where libbz2 rejects it, the index is refused or damaged (no reader
//   of the whole file sees it end without an error), and the bytes it serves before the first
//   damage are what libbz2 produced before it stopped.
//
// fuzz-args: -dict=bzip2.dict -max_len=65536
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/byte_buffer.h"
#include "fuzz_support.h"
#include "index/block_index.h"
#include "index/index_builder.h"
#include "index/index_format.h"
#include "index_test_support.h"
#include "io/source_bytes.h"
#include "test_support.h"

namespace {

using namespace mibz2;
using index::BlockIndex;
using index::BlockRecord;

constexpr size_t kWindow = 4;

class Sink final : public index::ResolvedBlockSink {
 public:
  std::vector<BlockRecord> records;
  std::vector<std::vector<uint8_t>> bytes;
  int finished = 0;
  size_t announced = 0;  // blocks the builder has called blocks_handed() after

  bool has_room(uint64_t, size_t) const override { return true; }
  void on_block(size_t block, const BlockRecord& record, base::ByteBuffer b) override {
    FUZZ_CHECK(finished == 0, "a block after the end of the build");
    FUZZ_CHECK(block == records.size(), "block " + std::to_string(block) + " handed over as number " +
                                            std::to_string(records.size()));
    records.push_back(record);
    bytes.emplace_back(b.data(), b.data() + b.size());
  }
  void on_finished() override { ++finished; }
  // One thread drives the build here, so this runs between its steps, never beside on_block().
  void blocks_handed() override {
    FUZZ_CHECK(records.size() > announced, "blocks_handed() after a step that handed no block");
    announced = records.size();
  }
};

index::BuildResult build(std::span<const uint8_t> data, Sink* sink) {
  const io::SpanBytes source(data);
  index::IndexBuilder builder(source, kWindow, sink);
  test::drive_builder(builder);
  FUZZ_CHECK(builder.finished() && builder.ready_work() == 0, "the driver returned before the build finished");
  FUZZ_CHECK(builder.bytes_done() <= builder.bytes_total(), "progress past the end");
  return builder.take_result();
}

std::string summary(const index::BuildResult& r) {
  if (!r.ok()) return "refused (" + r.error.message() + ")";
  const BlockIndex& i = r.index;
  return std::to_string(i.blocks.size()) + " blocks, " + std::to_string(i.decompressed_size) + " bytes, " +
         std::to_string(i.damaged_blocks) + " damaged, flags " + std::to_string(i.flags) + ", truncated at bit " +
         std::to_string(i.truncated_at_bit);
}

void check_index(std::span<const uint8_t> data, BlockIndex idx) {
  idx.source = {data.size(), 1, 2, 3};
  const std::vector<uint8_t> bytes = index::serialize(idx);
  const base::Result<BlockIndex> parsed = index::parse(bytes);
  FUZZ_CHECK(parsed.ok(), "the parser rejects a built index: " + parsed.status().message());
  FUZZ_CHECK(index::serialize(*parsed) == bytes, "serialize(parse(serialize(index))) differs");
  FUZZ_CHECK(idx.stream_count >= 1, "a usable index without a stream");
  FUZZ_CHECK(idx.trailing_bytes <= data.size(), "more trailing bytes than the file has");
  bool undecodable = false, stream_crc = false;
  for (const BlockRecord& r : idx.blocks) {
    undecodable = undecodable || r.undecodable();
    stream_crc = stream_crc || r.stream_crc_mismatch();
  }
  FUZZ_CHECK(((idx.flags & BlockIndex::kHasDamage) != 0) == (idx.damaged_blocks > 0), "flag: has damage");
  FUZZ_CHECK(((idx.flags & BlockIndex::kHasUndecodable) != 0) == undecodable, "flag: has undecodable");
  FUZZ_CHECK(((idx.flags & BlockIndex::kStreamCrcMismatch) != 0) == stream_crc, "flag: stream CRC mismatch");
  FUZZ_CHECK(idx.truncated_at_bit == 0 || (!idx.blocks.empty() && idx.blocks.back().truncated() &&
                                           idx.blocks.back().start_bit() == idx.truncated_at_bit),
             "truncated_at_bit without its truncated record");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t size) {
  static fuzz::GuardedBuffer guarded;
  const std::span<const uint8_t> data = guarded.place({input, size});

  Sink sink;
  const index::BuildResult with_sink = build(data, &sink);
  const index::BuildResult plain = build(data, nullptr);
  FUZZ_CHECK(with_sink.ok() == plain.ok() && with_sink.error.message() == plain.error.message() && with_sink.error.code() == plain.error.code() && with_sink.notes == plain.notes,
             "with a sink: " + summary(with_sink) + "; without: " + summary(plain));
  FUZZ_CHECK(index::serialize(with_sink.index) == index::serialize(plain.index), "a sink changes the index");
  FUZZ_CHECK(with_sink.ok() || !with_sink.error.message().empty(), "refused without a reason");

  const BlockIndex& idx = with_sink.index;
  FUZZ_CHECK(sink.finished == 1, "on_finished called " + std::to_string(sink.finished) + " times");
  FUZZ_CHECK(sink.announced == sink.records.size(), "blocks handed without a blocks_handed() after them");
  FUZZ_CHECK(sink.records.size() == idx.blocks.size(), "the sink got " + std::to_string(sink.records.size()) +
                                                           " blocks of " + std::to_string(idx.blocks.size()));
  for (size_t i = 0; i < idx.blocks.size(); ++i) {
    const BlockRecord& handed = sink.records[i];
    const BlockRecord& r = idx.blocks[i];
    // Only a stream's combined CRC, found after its last block was handed over, may mark it later.
    FUZZ_CHECK(handed.first_bit == r.first_bit && handed.out_offset == r.out_offset &&
                   handed.bit_length == r.bit_length && handed.crc == r.crc && handed.stream_level == r.stream_level &&
                   (handed.flags == r.flags || (handed.flags | BlockRecord::kStreamCrcMismatch) == r.flags),
               "block " + std::to_string(i) + " was handed to the sink with another record");
    if (handed.damaged()) FUZZ_CHECK(sink.bytes[i].empty(), "bytes handed over for damaged block " + std::to_string(i));
    else FUZZ_CHECK(sink.bytes[i].size() == idx.block_size(i), "block " + std::to_string(i) + " handed over with " +
                                                                   std::to_string(sink.bytes[i].size()) + " bytes, not " +
                                                                   std::to_string(idx.block_size(i)));
  }
  if (with_sink.ok()) check_index(data, idx);

  const test::LibResult lib = test::libbz2_decompress(data);
  const std::string both = "libbz2 " + (lib.ok ? std::string("accepts") : "rejects (" + std::to_string(lib.error) + ")") +
                           " with " + std::to_string(lib.out.size()) + " bytes; the index: " + summary(with_sink);
  // The bytes the index serves from its start up to its first damaged block.
  std::vector<uint8_t> served;
  for (size_t i = 0; i < idx.blocks.size() && !idx.blocks[i].damaged(); ++i)
    served.insert(served.end(), sink.bytes[i].begin(), sink.bytes[i].end());
  if (lib.ok) {
    FUZZ_CHECK(with_sink.ok() && idx.damaged_blocks == 0 && idx.flags == 0 && idx.truncated_at_bit == 0, both);
    FUZZ_CHECK(idx.decompressed_size == lib.out.size() && served == lib.out, "other bytes than libbz2's: " + both);
  } else {
    FUZZ_CHECK(!with_sink.ok() || idx.damaged_blocks > 0, both);
    FUZZ_CHECK(served.size() <= lib.out.size() && std::equal(served.begin(), served.end(), lib.out.begin()),
               "bytes before the first damage are not libbz2's: " + both);
  }
  return 0;
}
