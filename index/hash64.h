// hash64: a fast 64-bit hash for detecting accidental damage in index files and for fingerprints of
// source files (not a cryptographic signature). Word at a time, ~5 GB/s, so checking the index of a
// 100 GB dump (~15 MB) costs a few milliseconds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace mibz2::index {

class Hash64 {
 public:
  explicit Hash64(uint64_t seed = 0) : h_(seed ^ 0x243F6A8885A308D3ull) {}

  void update(const void* data, size_t size) {
    const uint8_t* p = static_cast<const uint8_t*>(data);
    total_ += size;
    // Finish a partial word left by a previous call.
    while (pending_len_ && size) {
      pending_ |= uint64_t{*p++} << (8 * pending_len_++);
      --size;
      if (pending_len_ == 8) {
        mix(pending_);
        pending_ = 0;
        pending_len_ = 0;
      }
    }
    for (; size >= 8; p += 8, size -= 8) {
      uint64_t w;
      std::memcpy(&w, p, 8);
      mix(w);
    }
    while (size--) pending_ |= uint64_t{*p++} << (8 * pending_len_++);
  }

  uint64_t digest() const {
    uint64_t h = h_;
    if (pending_len_) h = step(h, pending_);
    h ^= total_ * 0x9E3779B97F4A7C15ull;
    // splitmix64 finaliser: every input bit affects every output bit.
    h ^= h >> 30;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 27;
    h *= 0x94D049BB133111EBull;
    h ^= h >> 31;
    return h;
  }

 private:
  static uint64_t step(uint64_t h, uint64_t w) {
    h ^= w * 0x9E3779B97F4A7C15ull;
    h = (h << 31) | (h >> 33);
    return h * 0xC2B2AE3D27D4EB4Full;
  }
  void mix(uint64_t w) { h_ = step(h_, w); }

  uint64_t h_;
  uint64_t total_ = 0;
  uint64_t pending_ = 0;
  unsigned pending_len_ = 0;
};

inline uint64_t hash64(const void* data, size_t size, uint64_t seed = 0) {
  Hash64 h(seed);
  h.update(data, size);
  return h.digest();
}

}  // namespace mibz2::index
