#include "bz2/run_length.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "bz2/cpu_dispatch.h"

#if MIBZ2_HAVE_X86_PATHS
#include <immintrin.h>
#endif

// The randomisation table is part of the format (a fixed list of 512 gaps). libbz2 exports it;
// using it keeps our copy of the format's data identical to the reference by construction.
extern "C" {
extern const int32_t BZ2_rNums[512];
}

namespace mibz2::bz2 {
namespace {
#define MIBZ2_RLE_NS rle_portable
#define MIBZ2_RLE_TARGET
#define MIBZ2_RLE_AVX2 0
#include "bz2/run_length_impl.h"
#undef MIBZ2_RLE_NS
#undef MIBZ2_RLE_TARGET
#undef MIBZ2_RLE_AVX2
#if MIBZ2_HAVE_X86_PATHS
#define MIBZ2_RLE_NS rle_avx2
#define MIBZ2_RLE_TARGET __attribute__((target("avx2,bmi2")))
#define MIBZ2_RLE_AVX2 1
#include "bz2/run_length_impl.h"
#undef MIBZ2_RLE_NS
#undef MIBZ2_RLE_TARGET
#undef MIBZ2_RLE_AVX2
#endif
}  // namespace

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

namespace {

// The most output `n` bytes of pre-RLE1 input can make, plus the 64 bytes the vector stores may
// write beyond it: a count byte first (after four equal bytes carried from the piece before), then
// four equal bytes and a count every five bytes, each count up to 255 copies.
constexpr size_t worst_output(size_t n) { return n + 254 * (1 + n / 5) + 64; }
// The longest slice whose worst output fits in `room` bytes (room >= worst_output(5)).
constexpr size_t slice_for_room(size_t room) { return (room - worst_output(0)) / 259 * 5; }
static_assert(worst_output(slice_for_room(worst_output(5))) <= worst_output(5));
static_assert(worst_output(slice_for_room(1 << 20)) <= (1 << 20));

}  // namespace

void RunLengthDecoder::feed(uint8_t* data, size_t size, base::ByteBuffer& out) {
  if (randomised_) derandomise(data, size);
  const bool avx2 = isa() >= Isa::kAvx2;
  // Slices bound the room needed ahead of the output: 4096 bytes make at most 212 KB. When the
  // buffer has less room left (it was sized for the block: BlockDecoder and the index reserve what
  // a block makes), slices shrink to fit it rather than grow it, down to kMinSlice.
  constexpr size_t kSlice = 4096;
  constexpr size_t kMinSlice = 64;
  for (size_t done = 0; done < size;) {
    size_t n = std::min(kSlice, size - done);
    if (const size_t room = out.capacity() - out.size(); room >= worst_output(kMinSlice))
      n = std::min(n, slice_for_room(room));
    out.reserve_extra(worst_output(n));
    uint8_t* const o = out.data() + out.size();
    uint8_t* end;
#if MIBZ2_HAVE_X86_PATHS
    if (avx2) {
      end = rle_avx2::decode(data + done, n, o, &last_, &run_);
    } else
#endif
    {
      (void)avx2;
      end = rle_portable::decode(data + done, n, o, &last_, &run_);
    }
    out.resize_uninitialized(out.size() + static_cast<size_t>(end - o));
    done += n;
  }
}

}  // namespace mibz2::bz2
