// InverseBwt on its own, against libbz2's inverse transform written out: any string of bytes is a
// BWT (of one cycle or of several), and its BwtRuns may split its runs of equal bytes anywhere,
// so the table build's vector fills meet runs of every length at every place of a bucket: at its
// start, in the middle, within 8 places of its end, and runs longer than a BwtRun holds.
#include "bz2/inverse_bwt.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "test_support.h"

namespace mibz2::test {
namespace {

// libbz2's inverse BWT (BZ2_decompress, the fast path: tt[] with the next position in the high
// bits), n steps from the origin whatever the cycles.
Bytes libbz2_inverse(const Bytes& ll, uint32_t orig_ptr) {
  const uint32_t n = static_cast<uint32_t>(ll.size());
  uint32_t cftab[257] = {};
  for (uint8_t b : ll) cftab[b + 1]++;
  for (int b = 1; b < 257; ++b) cftab[b] += cftab[b - 1];
  std::vector<uint32_t> tt(n);
  for (uint32_t i = 0; i < n; ++i) tt[i] = ll[i];
  for (uint32_t i = 0; i < n; ++i) tt[cftab[ll[i]]++] |= i << 8;
  Bytes out(n);
  uint32_t pos = tt[orig_ptr] >> 8;
  for (uint32_t k = 0; k < n; ++k) {
    pos = tt[pos];
    out[k] = static_cast<uint8_t>(pos & 0xFF);
    pos >>= 8;
  }
  return out;
}

// ll as BwtRuns: each maximal run cut into pieces of random lengths (up to kMaxBwtRunCount),
// sometimes after a leading run of no bytes (as a block that starts with a literal has).
uint32_t to_runs(const Bytes& ll, Rng& rng, bz2::BwtRun* runs) {
  uint32_t k = 0;
  if (rng.below(2)) runs[k++] = bz2::make_bwt_run(rng.byte(), 0);
  for (size_t i = 0; i < ll.size();) {
    size_t end = i;
    while (end < ll.size() && ll[end] == ll[i]) ++end;
    for (size_t left = end - i; left > 0;) {
      const uint32_t piece = rng.below(3) == 0 ? 1 + rng.below(static_cast<uint32_t>(std::min<size_t>(left, bz2::kMaxBwtRunCount)))
                                               : static_cast<uint32_t>(std::min<size_t>(left, bz2::kMaxBwtRunCount));
      runs[k++] = bz2::make_bwt_run(ll[i], piece);
      left -= piece;
    }
    i = end;
  }
  return k;
}

Bytes inverse(bz2::InverseBwt& bwt, const Bytes& ll, uint32_t orig_ptr, Rng& rng) {
  const uint32_t n = static_cast<uint32_t>(ll.size());
  bwt.reserve(n);
  uint32_t counts[256] = {};
  for (uint8_t b : ll) counts[b]++;
  const uint32_t n_runs = to_runs(ll, rng, bwt.runs());
  EXPECT_EQ(bwt.run(n_runs, n, counts, orig_ptr), bz2::ErrorCode::kOk);
  Bytes out;
  bwt.for_each_piece([&](const uint8_t* p, size_t size) { out.insert(out.end(), p, p + size); });
  return out;
}

// Bytes with runs of every length: from `alphabet` values, each run 1..max_run long.
Bytes runs_of(size_t n, uint32_t alphabet, uint32_t max_run, Rng& rng) {
  Bytes ll;
  while (ll.size() < n) {
    const uint8_t b = static_cast<uint8_t>(rng.below(alphabet) * (256 / alphabet));
    ll.insert(ll.end(), std::min<size_t>(n - ll.size(), 1 + rng.below(max_run)), b);
  }
  return ll;
}

TEST(InverseBwt, AgreesWithLibbz2OnAnyBytesSplitIntoAnyRuns) {
  Rng rng(51);
  bz2::InverseBwt bwt;  // one object throughout: its memory is reused from block to block
  for (int round = 0; round < 400; ++round) {
    const size_t n = round < 300 ? 1 + rng.below(round < 100 ? 40 : 3000) : 1 + rng.below(200000);
    const uint32_t alphabet = 1 + rng.below(round % 4 == 0 ? 256 : 12);
    const uint32_t max_run = rng.below(4) == 0 ? 1000 : 1 + rng.below(12);
    const Bytes ll = runs_of(n, alphabet, max_run, rng);
    const uint32_t orig_ptr = rng.below(static_cast<uint32_t>(n));
    ASSERT_TRUE(same_bytes(inverse(bwt, ll, orig_ptr, rng), libbz2_inverse(ll, orig_ptr)))
        << "round " << round << ", " << n << " bytes of " << alphabet << " values";
  }
}

TEST(InverseBwt, SeveralCyclesAndTheLargestBlocks) {
  Rng rng(52);
  bz2::InverseBwt bwt;
  // "abab...": equal rotations, a table of several cycles (walked on one lane).
  Bytes periodic;
  for (int i = 0; i < 5000; ++i) periodic.push_back(i % 2 ? 'a' : 'b');
  EXPECT_TRUE(same_bytes(inverse(bwt, periodic, 7, rng), libbz2_inverse(periodic, 7)));
  // 900000 bytes: one byte value (one bucket, runs of the longest BwtRuns), then text-like runs.
  const Bytes zeros(900000, 0);
  EXPECT_TRUE(same_bytes(inverse(bwt, zeros, 0, rng), libbz2_inverse(zeros, 0)));
  const Bytes big = runs_of(900000, 40, 6, rng);
  EXPECT_TRUE(same_bytes(inverse(bwt, big, 123456, rng), libbz2_inverse(big, 123456)));
}

}  // namespace
}  // namespace mibz2::test
