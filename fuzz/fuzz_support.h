// Helpers shared by the libFuzzer targets of this folder: a check that aborts with a message (so
// libFuzzer saves the input as a crash), and buffers placed against guard pages (libdeflate's
// fuzzers do the same): a read one byte past the input faults at once, even in code that reads
// ahead in wide words where a sanitizer would not look.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace mibz2::fuzz {

// Prints "FUZZ CHECK FAILED at file:line: cond: message" and aborts.
[[noreturn]] void check_failed(const char* file, int line, const char* cond, const std::string& message);

#define FUZZ_CHECK(cond, message)                                                   \
  do {                                                                              \
    if (!(cond)) ::mibz2::fuzz::check_failed(__FILE__, __LINE__, #cond, (message)); \
  } while (0)

// A reusable mapping with an inaccessible page on each side. place() copies bytes so that the last
// one sits right before the upper guard page.
class GuardedBuffer {
 public:
  GuardedBuffer() = default;
  ~GuardedBuffer();
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  std::span<const uint8_t> place(std::span<const uint8_t> data);

 private:
  uint8_t* map_ = nullptr;  // the whole mapping, guards included
  size_t map_size_ = 0;
  size_t usable_ = 0;       // accessible bytes between the guards (whole pages)
};

// Little-endian integers from a byte string (for the small headers some targets put before their
// input); reads past the end give zero bytes.
uint32_t le32(std::span<const uint8_t> bytes, size_t offset);

// A short hex dump of the first bytes, for messages.
std::string hex_prefix(std::span<const uint8_t> bytes, size_t max = 32);

}  // namespace mibz2::fuzz
