// The last stage of a bzip2 block: undo the initial run-length encoding (RLE1: after four equal
// bytes comes a count byte, 0..255 more copies), undo the obsolete "randomised" mode when the block
// asks for it, and compute the block CRC over the final bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/byte_buffer.h"

namespace mibz2::bz2 {

class RunLengthDecoder {
 public:
  explicit RunLengthDecoder(bool randomised) : randomised_(randomised) {}

  // Feeds the next piece of pre-RLE1 bytes (modified in place when randomised); appends to out.
  void feed(uint8_t* data, size_t size, base::ByteBuffer& out);

  // True when the bytes fed so far end with four equal bytes, whose count byte is still due. At
  // the end of a block that is corrupt data (libbz2 reads past the block and rejects it).
  bool awaiting_count() const { return run_ == 4; }

 private:
  void derandomise(uint8_t* data, size_t size);

  bool randomised_;
  int last_ = -1;            // previous byte, or -1 at the start and after a count byte
  int run_ = 0;              // how many times last_ has repeated (1..4)
  // Randomisation state: countdown to the next flipped byte and position in the table.
  int32_t rand_to_go_ = 0;
  int32_t rand_pos_ = 0;
};

}  // namespace mibz2::bz2
