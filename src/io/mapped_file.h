// Read-only memory map of a whole file, plus the file's identity (for index validation).
// Large dumps are mapped, not read: the kernel pages them in as the decoder walks them.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string>

namespace mibz2::io {

class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile(MappedFile&& o) noexcept;
  MappedFile& operator=(MappedFile&& o) noexcept;
  ~MappedFile();

  // Maps `path`; on failure returns false and sets *error to a message with strerror.
  bool open(const std::string& path, std::string* error);
  // Maps an open regular file (the descriptor may be closed afterwards).
  bool map_fd(int fd, std::string* error);

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  uint64_t size() const { return size_; }
  // Tells the kernel we read front to back (larger read-ahead).
  void advise_sequential() const;

 private:
  void close();
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace mibz2::io
