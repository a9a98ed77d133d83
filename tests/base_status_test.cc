// base::Status and base::Result: the one way errors travel above the format layer.
#include "base/status.h"

#include <cerrno>
#include <memory>
#include <string>

#include <gtest/gtest.h>

namespace mibz2::base {
namespace {

Status fails_when(bool cond) {
  MIBZ2_RETURN_ERROR_IF(cond, ENOENT, "no such thing");
  return {};
}

Result<std::unique_ptr<int>> value_or_error(bool fail) {
  if (fail) return Status::error(EACCES, "not yours");
  return std::make_unique<int>(7);
}

Status forwards(bool fail) {
  MIBZ2_FORWARD_IF_ERROR(fails_when(fail));
  MIBZ2_FORWARD_IF_ERROR(value_or_error(false));
  return Status::error(EBADMSG, "reached the end");
}

TEST(Status, SuccessHasNoCodeAndNoMessage) {
  const Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), 0);
  EXPECT_EQ(s.message(), "");
  EXPECT_TRUE(s.prefixed("file: ").ok());
}

TEST(Status, AFailureAlwaysHasAKind) {
  const Status s = Status::error(0, "something");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), EIO);
  EXPECT_EQ(s.prefixed("dump.bz2: ").message(), "dump.bz2: something");
  EXPECT_EQ(s.prefixed("dump.bz2: ").code(), EIO);
}

TEST(Status, KindsOfFailure) {
  EXPECT_TRUE(is_bad_input(Status::error(EILSEQ, "not bzip2")));
  EXPECT_TRUE(is_bad_input(Status::error(EBADMSG, "damaged")));
  EXPECT_FALSE(is_bad_input(Status::error(EIO, "read error")));
  EXPECT_TRUE(is_stopped(Status::error(ECANCELED, "unmounting")));
  EXPECT_FALSE(is_stopped(Status::error(EINTR, "interrupted")));
}

TEST(Status, AnErrnoOfTheSystemIsAlwaysTheEnvironments) {
  EXPECT_TRUE(is_environment(Status::error(EIO, "read error")));
  EXPECT_FALSE(is_environment(Status()));
  EXPECT_FALSE(is_environment(Status::error(EBADMSG, "damaged")));
  EXPECT_FALSE(is_environment(Status::error(ECANCELED, "unmounting")));
  // A file system's checksum failure (ext4: EBADMSG) is a failing disk, not damaged content.
  const Status read = Status::os_error(EBADMSG, "read error at byte 0: Bad message (EBADMSG)");
  EXPECT_EQ(read.code(), EIO);
  EXPECT_TRUE(is_environment(read));
  EXPECT_EQ(read.message(), "read error at byte 0: Bad message (EBADMSG)");
  EXPECT_EQ(Status::os_error(EILSEQ, "x").code(), EIO);
  EXPECT_EQ(Status::os_error(ECANCELED, "x").code(), EIO);
  EXPECT_EQ(Status::os_error(ENOENT, "missing").code(), ENOENT);
  EXPECT_EQ(Status::os_error(0, "?").code(), EIO);
}

TEST(Status, MacrosReturnTheFirstFailure) {
  EXPECT_TRUE(fails_when(false).ok());
  const Status first = forwards(true);
  EXPECT_EQ(first.code(), ENOENT);
  EXPECT_EQ(first.message(), "no such thing");
  EXPECT_EQ(forwards(false).code(), EBADMSG);
}

TEST(Result, HoldsAValueOrAStatus) {
  Result<std::unique_ptr<int>> good = value_or_error(false);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(**good, 7);
  EXPECT_TRUE(good.status().ok());
  std::unique_ptr<int> taken = std::move(good).value();
  EXPECT_EQ(*taken, 7);

  const Result<std::unique_ptr<int>> bad = value_or_error(true);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), EACCES);
  EXPECT_EQ(bad.status().message(), "not yours");
}

}  // namespace
}  // namespace mibz2::base
