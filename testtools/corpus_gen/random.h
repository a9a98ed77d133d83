// Randomness for the corpus generator: xoshiro256** seeded through splitmix64, and a Zipf-like
// choice among ranks. Integer arithmetic only (no std distributions, no floating point), so the
// same seed gives the same documents with any compiler on any machine.
#pragma once

#include <cstdint>
#include <vector>

namespace mibz2::corpus {

// splitmix64: the seeding step of xoshiro, and a good integer hash on its own.
inline uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A stateless mix of two integers: stable per-index properties (names of referenced pages...).
inline uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t x = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL);
  return splitmix64(x);
}

// xoshiro256**: fast, with the statistics text generation needs; every choice below derives from it.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& v : s_) v = splitmix64(seed);
  }
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, n) (multiply-shift; the tiny bias does not matter, the determinism does).
  uint32_t below(uint32_t n) { return static_cast<uint32_t>(((next() >> 32) * n) >> 32); }
  uint32_t range(uint32_t lo, uint32_t hi) { return lo + below(hi - lo + 1); }  // inclusive
  bool percent(uint32_t p) { return below(100) < p; }
  bool permille(uint32_t p) { return below(1000) < p; }
  // Heavy-tailed count: lo + geometric-like tail; each extra step continues with p_continue %.
  uint32_t tail(uint32_t lo, uint32_t p_continue, uint32_t cap) {
    uint32_t n = lo;
    while (n < cap && percent(p_continue)) ++n;
    return n;
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// Zipf-like choice among n ranks with integer weights 2^40/(rank+q): a lookup table covers the
// head, and a share of picks goes uniformly over all ranks (the long tail real text has).

class Zipf {
 public:
  Zipf() = default;
  Zipf(uint32_t n, uint32_t q, uint32_t tail_per_256, uint32_t table_bits = 16) : n_(n), tail_(tail_per_256) {
    const uint32_t size = 1u << table_bits;
    mask_ = size - 1;
    table_.resize(size);
    std::vector<uint64_t> w(n);
    unsigned __int128 total = 0;
    for (uint32_t k = 0; k < n; ++k) {
      w[k] = (uint64_t{1} << 40) / (uint64_t{k} + q);
      total += w[k];
    }
    uint32_t k = 0;
    unsigned __int128 cum = w[0];
    for (uint32_t i = 0; i < size; ++i) {
      const unsigned __int128 target = (total * (2 * i + 1)) / (2 * uint64_t{size});
      while (k + 1 < n && cum <= target) cum += w[++k];
      table_[i] = k;
    }
  }
  uint32_t pick(Rng& rng) const {
    const uint64_t r = rng.next();
    if ((r & 0xff) < tail_) return static_cast<uint32_t>(((r >> 32) * n_) >> 32);
    return table_[(r >> 8) & mask_];
  }
  // A deterministic pick driven by a hash instead of the stream (stable choices per index).
  uint32_t pick_hash(uint64_t h) const {
    if ((h & 0xff) < tail_) return static_cast<uint32_t>(((h >> 32) * n_) >> 32);
    return table_[(h >> 8) & mask_];
  }
  uint32_t size() const { return n_; }

 private:
  uint32_t n_ = 0, tail_ = 0, mask_ = 0;
  std::vector<uint32_t> table_;
};


}  // namespace mibz2::corpus
