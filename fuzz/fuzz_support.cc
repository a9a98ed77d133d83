#include "fuzz_support.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace mibz2::fuzz {

void check_failed(const char* file, int line, const char* cond, const std::string& message) {
  std::fprintf(stderr, "\nFUZZ CHECK FAILED at %s:%d: %s: %s\n", file, line, cond, message.c_str());
  std::fflush(stderr);
  std::abort();
}

GuardedBuffer::~GuardedBuffer() {
  if (map_) munmap(map_, map_size_);
}

std::span<const uint8_t> GuardedBuffer::place(std::span<const uint8_t> data) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t need = (data.size() + page - 1) / page * page;
  if (!map_ || need > usable_) {
    if (map_) munmap(map_, map_size_);
    usable_ = need ? need : page;
    map_size_ = usable_ + 2 * page;
    void* p = mmap(nullptr, map_size_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      std::perror("GuardedBuffer: mmap");
      std::abort();
    }
    map_ = static_cast<uint8_t*>(p);
    if (mprotect(map_ + page, usable_, PROT_READ | PROT_WRITE) != 0) {
      std::perror("GuardedBuffer: mprotect");
      std::abort();
    }
  }
  uint8_t* const end = map_ + page + usable_;
  uint8_t* const start = end - data.size();
  if (!data.empty()) std::memcpy(start, data.data(), data.size());
  return {start, data.size()};
}

uint32_t le32(std::span<const uint8_t> bytes, size_t offset) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i)
    if (offset + i < bytes.size()) v |= uint32_t{bytes[offset + i]} << (8 * i);
  return v;
}

std::string hex_prefix(std::span<const uint8_t> bytes, size_t max) {
  std::string s;
  char buf[4];
  for (size_t i = 0; i < bytes.size() && i < max; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", bytes[i]);
    s += buf;
  }
  if (bytes.size() > max) s += "...";
  return s + " (" + std::to_string(bytes.size()) + " bytes)";
}

}  // namespace mibz2::fuzz
