// One way to say what went wrong, for every layer above bz2 (the format layer keeps its small
// bz2::Error codes with a bit offset, turned into a Status by the index layer that knows the file).
//
// A Status is an errno value and a message. The errno says what kind of failure it is, which is
// all a FUSE reply needs and what the programs' exit status is chosen by; the message says what
// happened, naming the file and the place ("dump.json.bz2: read error at byte 2097148 (...)").
// Besides the errno values of the system, three codes carry the kinds that are not the machine's
// failure (base::is_bad_input, base::is_stopped):
//
//   EILSEQ     the content is not usable bzip2 (not bzip2, empty, ends in the header): bad input
//   EBADMSG    the content is damaged (a block's CRC, a truncation): bad input
//   ECANCELED  the work was stopped (a consumer stopped reading, the mount is going away)
//
// Everything else (EIO, ENOENT, EACCES, ENOMEM, EMFILE, ESTALE, ...) is the environment's
// (base::is_environment): never a fact about a file's bytes, never stored, tried again later
// (docs/ARCHITECTURE.md, "A file's index life"). An errno the system returns enters as Status::os_error, which
// keeps it the environment's even when the system chose one of the three codes above (ext4 fails a
// read whose checksum does not match with EBADMSG: a failing disk, not a damaged bzip2 stream).
//
// Result<T> is a value or a Status. RETURN_ERROR_IF and FORWARD_IF_ERROR keep error paths one line
// long, as zstd's macros of the same names do.
#pragma once

#include <cerrno>
#include <string>
#include <utility>
#include <variant>

#include "base/invariant.h"

namespace mibz2::base {

class [[nodiscard]] Status {
 public:
  Status() = default;  // success
  // A failure: `code` is a positive errno value (0 is turned into EIO: a failure has a kind).
  static Status error(int code, std::string message) { return Status(code ? code : EIO, std::move(message)); }
  // A failure of the machine's, from the errno of a system call (an open, a read, a write): EIO in
  // place of the codes that stand for bad input or stopped work, the message saying which it was.
  static Status os_error(int errno_value, std::string message) {
    const bool reserved = errno_value == EILSEQ || errno_value == EBADMSG || errno_value == ECANCELED;
    return error(reserved ? EIO : errno_value, std::move(message));
  }

  bool ok() const { return code_ == 0; }
  int code() const { return code_; }  // 0 on success
  const std::string& message() const { return message_; }
  // The same failure with `context` before its message ("dump.json.bz2: " + message).
  Status prefixed(const std::string& context) const { return ok() ? *this : Status(code_, context + message_); }
  // So that FORWARD_IF_ERROR works on a Status and on a Result alike.
  const Status& status() const { return *this; }

 private:
  Status(int code, std::string message) : code_(code), message_(std::move(message)) {}
  int code_ = 0;
  std::string message_;
};

// Whether a failure is about the input's content (bzip2's exit status 2) rather than the machine.
inline bool is_bad_input(const Status& s) { return s.code() == EILSEQ || s.code() == EBADMSG; }
// Whether the work was stopped rather than failed.
inline bool is_stopped(const Status& s) { return s.code() == ECANCELED; }
// Whether a failure is the machine's (neither bad input nor stopped): it says nothing of the file,
// and trying again later may succeed (bzip2's exit status 1).
inline bool is_environment(const Status& s) { return !s.ok() && !is_bad_input(s) && !is_stopped(s); }

// A value, or why there is none.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit, as a return value
  Result(Status status) : v_(std::move(status)) { MIBZ2_INVARIANT(!std::get<Status>(v_).ok()); }  // NOLINT

  bool ok() const { return v_.index() == 0; }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  // The failure; a success's is ok().
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace mibz2::base

// Returns Status::error(code, message) from the enclosing function when `cond` holds.
#define MIBZ2_RETURN_ERROR_IF(cond, code, message)                      \
  do {                                                                  \
    if (cond) return ::mibz2::base::Status::error((code), (message));   \
  } while (0)

// Returns the failure of `expr` (a Status or a Result) from the enclosing function, if it failed.
#define MIBZ2_FORWARD_IF_ERROR(expr)                     \
  do {                                                   \
    if (auto&& mibz2_fwd_ = (expr); !mibz2_fwd_.ok())    \
      return mibz2_fwd_.status();                        \
  } while (0)
