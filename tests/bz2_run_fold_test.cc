// run_fold: zero runs folded into literals. The scalar fold against runs worked out by hand, and
// the AVX2 and AVX-512 folds against the scalar one on random symbol streams: every literal, the
// run left open, and the too-long run at every place of an 8- or 16-symbol chunk.
#include "bz2/run_fold.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "bz2/cpu_dispatch.h"
#include "test_support.h"

namespace mibz2::test {
namespace {

using bz2::Literal;
using bz2::RunState;

constexpr uint16_t kRunA = 0;
using bz2::kRunB;
constexpr uint32_t kNoError = 0xFFFFFFFF;

struct Fold {
  std::vector<Literal> lits;
  RunState runs;
  uint32_t error_at = kNoError;
};

Fold fold_scalar(const std::vector<uint16_t>& syms, RunState runs) {
  Fold f;
  f.lits.resize(syms.size() + 1);
  const uint32_t n = static_cast<uint32_t>(syms.size());
  f.lits.resize(bz2::fold_runs(syms.data(), 0, n, runs, f.lits.data(), 0, &f.error_at));
  f.runs = runs;
  return f;
}

#if MIBZ2_HAVE_X86_PATHS
using VectorFold = uint32_t (*)(const uint16_t*, uint32_t, RunState&, Literal*, uint32_t*);

Fold fold_vector(VectorFold fold, const std::vector<uint16_t>& syms, RunState runs) {
  Fold f;
  f.lits.resize(syms.size() + 1);
  const uint32_t n = static_cast<uint32_t>(syms.size());
  f.lits.resize(fold(syms.data(), n, runs, f.lits.data(), &f.error_at));
  f.runs = runs;
  return f;
}

void expect_same(const Fold& got, const Fold& want, const std::string& what) {
  ASSERT_EQ(got.lits.size(), want.lits.size()) << what;
  for (size_t i = 0; i < want.lits.size(); ++i) {
    EXPECT_EQ(got.lits[i].run, want.lits[i].run) << what << ", literal " << i;
    EXPECT_EQ(got.lits[i].index, want.lits[i].index) << what << ", literal " << i;
    EXPECT_EQ(got.lits[i].symbol, want.lits[i].symbol) << what << ", literal " << i;
  }
  EXPECT_EQ(got.runs.length, want.runs.length) << what;
  EXPECT_EQ(got.runs.weight, want.runs.weight) << what;
  EXPECT_EQ(got.error_at, want.error_at) << what;
}
#endif

// A run of `length` (>= 1) in bijective base 2, least significant digit first.
std::vector<uint16_t> digits_of(uint32_t length) {
  std::vector<uint16_t> out;
  while (length > 0) {
    const uint32_t digit = (length - 1) % 2 + 1;  // 1 or 2
    out.push_back(digit == 1 ? kRunA : kRunB);
    length = (length - digit) / 2;
  }
  return out;
}

TEST(RunFold, ListsEachLiteralWithTheRunBeforeIt) {
  // RUNA RUNB: 1 + 2 * 2 = 5 copies, then MTF index 4; index 0 with no run; RUNB: 2, index 254;
  // a run of 3 (RUNA RUNA) left open.
  const std::vector<uint16_t> syms = {kRunA, kRunB, 5, 1 + 1, kRunB, 255, kRunA, kRunA};
  const Fold f = fold_scalar(syms, RunState{});
  ASSERT_EQ(f.lits.size(), 3u);
  EXPECT_EQ(f.lits[0].run, 5u);
  EXPECT_EQ(f.lits[0].index, 4u);
  EXPECT_EQ(f.lits[0].symbol, 2u);
  EXPECT_EQ(f.lits[1].run, 0u);
  EXPECT_EQ(f.lits[1].index, 1u);
  EXPECT_EQ(f.lits[1].symbol, 3u);
  EXPECT_EQ(f.lits[2].run, 2u);
  EXPECT_EQ(f.lits[2].index, 254u);
  EXPECT_EQ(f.lits[2].symbol, 5u);
  EXPECT_EQ(f.runs.length, 3u);
  EXPECT_EQ(f.runs.weight, 4u);
  EXPECT_EQ(f.error_at, kNoError);
}

TEST(RunFold, EveryRunLengthUpToTheLimitRoundTrips) {
  // Lengths of 1 to 21 digits, each followed by a literal; the longest run libbz2 accepts is
  // 21 RUNBs: 2 * (2^21 - 1).
  for (uint32_t length : {1u, 2u, 3u, 4u, 1000u, 65535u, (1u << 21) - 1, 2 * ((1u << 21) - 1)}) {
    std::vector<uint16_t> syms = digits_of(length);
    syms.push_back(7);
    const Fold f = fold_scalar(syms, RunState{});
    ASSERT_EQ(f.lits.size(), 1u) << length;
    EXPECT_EQ(f.lits[0].run, length);
    EXPECT_EQ(f.error_at, kNoError) << length;
  }
  std::vector<uint16_t> syms(22, kRunA);
  const Fold f = fold_scalar(syms, RunState{});
  EXPECT_EQ(f.error_at, 21u) << "a 22nd digit";
  EXPECT_EQ(f.runs.weight, 1u << 21);
}

// Each vector fold, where the CPU runs it, against the scalar one.
class RunFoldVector : public ::testing::TestWithParam<bz2::Isa> {
 protected:
  void SetUp() override {
    const std::vector<bz2::Isa> levels = isa_levels();
    if (std::find(levels.begin(), levels.end(), GetParam()) == levels.end())
      GTEST_SKIP() << "this CPU does not run the " << isa_name(GetParam()) << " path";
  }
  void check(const std::vector<uint16_t>& syms, RunState runs, const std::string& what) {
#if MIBZ2_HAVE_X86_PATHS
    const VectorFold fold = GetParam() == bz2::Isa::kAvx512 ? bz2::fold_runs_avx512 : bz2::fold_runs_avx2;
    expect_same(fold_vector(fold, syms, runs), fold_scalar(syms, runs), what);
#else
    (void)syms, (void)runs, (void)what;
#endif
  }
};
INSTANTIATE_TEST_SUITE_P(Isa, RunFoldVector, ::testing::Values(bz2::Isa::kAvx2, bz2::Isa::kAvx512),
                         [](const ::testing::TestParamInfo<bz2::Isa>& info) { return std::string(isa_name(info.param)); });

// An open run carried in: `digits` digits (0..21) worth `length`.
RunState carried_run(Rng& rng, uint32_t digits) {
  uint32_t length = 0;
  for (uint32_t d = 0; d < digits; ++d) length += (1 + rng.below(2)) << d;
  return RunState{length, 1u << digits};
}

TEST_P(RunFoldVector, AgreesWithTheScalarFoldOnRandomStreams) {
  Rng rng(33);
  for (int round = 0; round < 3000; ++round) {
    // From almost all literals to almost all digits; lengths across chunk boundaries.
    const uint32_t literal_permille = 1 + rng.below(999);
    const size_t n = rng.below(4) == 0 ? rng.below(40) : rng.below(1601);
    std::vector<uint16_t> syms(n);
    for (uint16_t& s : syms) {
      if (rng.below(1000) < literal_permille) {
        s = static_cast<uint16_t>(2 + (rng.below(4) == 0 ? rng.below(256) : rng.below(8)));
      } else {
        s = static_cast<uint16_t>(rng.below(2));
      }
    }
    const RunState runs = carried_run(rng, rng.below(3) == 0 ? rng.below(22) : 0);
    check(syms, runs, "round " + std::to_string(round));
    if (HasFailure()) return;
  }
}

TEST_P(RunFoldVector, ATooLongRunStopsBothAtTheSameDigitWhereverItFalls) {
  Rng rng(34);
  // A run of 21 digits is fine and one of 22 is not, starting at every place of a chunk, with
  // every number of digits carried in.
  for (uint32_t carried = 0; carried <= 21; ++carried) {
    for (uint32_t start = 0; start < 40; ++start) {
      for (uint32_t digits : {21 - carried, 22 - carried}) {
        std::vector<uint16_t> syms;
        for (uint32_t i = 0; i < start; ++i) syms.push_back(static_cast<uint16_t>(2 + rng.below(3)));
        const RunState runs = start == 0 ? carried_run(rng, carried) : RunState{};
        const uint32_t in_run = start == 0 ? digits : 21 + (digits - (21 - carried));
        for (uint32_t i = 0; i < in_run; ++i) syms.push_back(static_cast<uint16_t>(rng.below(2)));
        for (uint32_t i = 0; i < 20; ++i) syms.push_back(static_cast<uint16_t>(2 + rng.below(3)));
        check(syms, runs,
              "carried " + std::to_string(carried) + ", start " + std::to_string(start) + ", digits " +
                  std::to_string(in_run));
        if (HasFailure()) return;
      }
    }
  }
}

TEST_P(RunFoldVector, AllLiteralsAndAllDigits) {
  Rng rng(35);
  for (size_t n : {7u, 8u, 9u, 15u, 16u, 17u, 32u, 1600u}) {
    std::vector<uint16_t> literals(n);
    for (uint16_t& s : literals) s = static_cast<uint16_t>(2 + rng.below(256));
    check(literals, RunState{}, "literals, " + std::to_string(n));
    check(literals, carried_run(rng, 21), "literals after 21 carried digits, " + std::to_string(n));
    std::vector<uint16_t> digits(n);
    for (uint16_t& s : digits) s = static_cast<uint16_t>(rng.below(2));
    check(digits, RunState{}, "digits, " + std::to_string(n));
    check(digits, carried_run(rng, 5), "digits after 5 carried, " + std::to_string(n));
  }
}

}  // namespace
}  // namespace mibz2::test
