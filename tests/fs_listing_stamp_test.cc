// When a mirrored directory listing may be reused (src/fs/listing_stamp.h): while the directory's
// mtime and ctime are unchanged, and never when they were within a timestamp tick of the clock
// when the listing was read (a second change in that tick would leave both times as they were).
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "fs/listing_stamp.h"

namespace mibz2::fs {
namespace {

constexpr uint64_t kSecond = 1'000'000'000;

struct stat dir_at(uint64_t mtime_ns, uint64_t ctime_ns) {
  struct stat st {};
  st.st_mtim = {static_cast<time_t>(mtime_ns / kSecond), static_cast<long>(mtime_ns % kSecond)};
  st.st_ctim = {static_cast<time_t>(ctime_ns / kSecond), static_cast<long>(ctime_ns % kSecond)};
  return st;
}

TEST(ListingStamp, AListingReadLongAfterTheLastChangeIsReusedWhileBothTimesStay) {
  const uint64_t now = 1'700'000'000 * kSecond;
  const struct stat st = dir_at(now - 60 * kSecond, now - 50 * kSecond);
  const ListingStamp s = ListingStamp::of(st, now);
  EXPECT_TRUE(s.matches(st));
  EXPECT_FALSE(s.matches(dir_at(now - 59 * kSecond, now - 50 * kSecond))) << "mtime moved";
  EXPECT_FALSE(s.matches(dir_at(now - 60 * kSecond, now))) << "mtime put back, ctime moved";
}

TEST(ListingStamp, AListingReadWithinATickOfAChangeIsNeverReused) {
  const uint64_t now = 1'700'000'000 * kSecond;
  for (uint64_t ago : {uint64_t{0}, kSecond / 1000, kSecond, 2 * kSecond - 1}) {
    SCOPED_TRACE(ago);
    const struct stat by_mtime = dir_at(now - ago, now - 60 * kSecond);
    EXPECT_FALSE(ListingStamp::of(by_mtime, now).matches(by_mtime));
    const struct stat by_ctime = dir_at(now - 60 * kSecond, now - ago);
    EXPECT_FALSE(ListingStamp::of(by_ctime, now).matches(by_ctime));
  }
  const struct stat future = dir_at(now + 5 * kSecond, now + 5 * kSecond);  // a clock behind the files'
  EXPECT_FALSE(ListingStamp::of(future, now).matches(future));
  EXPECT_FALSE(ListingStamp{}.matches(dir_at(0, 0))) << "no listing read yet";
}

}  // namespace
}  // namespace mibz2::fs
