#include "bz2/run_length.h"

#include <cstring>

// The randomisation table is part of the format (a fixed list of 512 gaps). libbz2 exports it;
// using it keeps our copy of the format's data identical to the reference by construction.
extern "C" {
extern const int32_t BZ2_rNums[512];
}

namespace mibz2::bz2 {

void RunLengthDecoder::derandomise(uint8_t* data, size_t size) {
  // Byte k is xored with 1 when the countdown, reloaded from the table each time it runs out,
  // reaches 1 after being decremented for byte k (libbz2's BZ_RAND_UPD_MASK / BZ_RAND_MASK).
  for (size_t k = 0; k < size; ++k) {
    if (rand_to_go_ == 0) {
      rand_to_go_ = BZ2_rNums[rand_pos_];
      rand_pos_ = (rand_pos_ + 1) & 511;
    }
    --rand_to_go_;
    data[k] ^= rand_to_go_ == 1 ? 1 : 0;
  }
}

void RunLengthDecoder::feed(uint8_t* data, size_t size, ByteBuffer& out) {
  if (randomised_) derandomise(data, size);
  out.reserve_extra(size);
  uint8_t* o = out.data() + out.size();
  const uint8_t* p = data;
  const uint8_t* const end = data + size;
  int last = last_;
  int run = run_;
  while (p < end) {
    const uint8_t b = *p++;
    if (run == 4) {
      // b is a count of further copies of `last`.
      size_t done = static_cast<size_t>(o - out.data());
      out.resize_uninitialized(done);
      out.reserve_extra(b + static_cast<size_t>(end - p));
      o = out.data() + done;
      std::memset(o, last, b);
      o += b;
      run = 0;
      last = -1;
      continue;
    }
    *o++ = b;
    if (b == last) {
      ++run;
    } else {
      last = b;
      run = 1;
    }
  }
  out.resize_uninitialized(static_cast<size_t>(o - out.data()));
  last_ = last;
  run_ = run;
}

}  // namespace mibz2::bz2
