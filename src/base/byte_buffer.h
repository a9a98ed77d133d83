// A growable byte buffer that, unlike std::vector<uint8_t>, does not zero what it allocates:
// decoded blocks are written once and read many times, and zeroing up to 46 MB per block first
// would cost as much as writing it. Its memory comes from buffer_memory, which makes each large
// buffer a mapping of its own (resident memory follows what is held), keeps large buffers freed
// for the next block instead of unmapping them, and grows a buffer larger than those by moving its
// pages in place of copying them (so that growth never holds an old and a new copy of a block).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "base/buffer_memory.h"

namespace mibz2::base {

class ByteBuffer {
 public:
  ByteBuffer() = default;
  ByteBuffer(const ByteBuffer&) = delete;
  ByteBuffer& operator=(const ByteBuffer&) = delete;
  ByteBuffer(ByteBuffer&& o) noexcept { swap(o); }
  ByteBuffer& operator=(ByteBuffer&& o) noexcept {
    ByteBuffer tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  ~ByteBuffer() { buffer_memory::release(data_, capacity_); }

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }

  void clear() { size_ = 0; }
  // Makes room for at least `extra` more bytes beyond size() (amortised growth).
  void reserve_extra(size_t extra) {
    if (capacity_ - size_ < extra) grow(size_ + extra);
  }
  // Makes the capacity at least `total` bytes, allocating exactly that much if it must grow (for
  // buffers whose final size is known, so that capacity is what memory accounting says; large
  // sizes are rounded up to buffer_memory::kGranule).
  void reserve_exact(size_t total) {
    if (total > capacity_) move_to(total);
  }
  // Sets the size; the bytes up to it must have been written (or are left unspecified).
  void resize_uninitialized(size_t n) {
    if (n > capacity_) grow(n);
    size_ = n;
  }
  void append(const uint8_t* p, size_t n) {
    reserve_extra(n);
    std::memcpy(data_ + size_, p, n);
    size_ += n;
  }
  // Gives memory back when the buffer holds far more than it needs (after a huge block).
  void shrink_to_fit() {
    if (capacity_ == size_) return;
    ByteBuffer tmp;
    tmp.resize_uninitialized(size_);
    if (size_) std::memcpy(tmp.data_, data_, size_);
    swap(tmp);
  }
  void swap(ByteBuffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(capacity_, o.capacity_);
  }

 private:
  void grow(size_t need) {
    size_t cap = capacity_ ? capacity_ : 4096;
    while (cap < need) cap += cap / 2 + 4096;
    move_to(cap);
  }
  // At least `cap` bytes, the bytes so far kept (moved, not copied, where the buffer is a mapping
  // of its own: buffer_memory::reallocate).
  void move_to(size_t cap) {
    size_t got = 0;
    data_ = static_cast<uint8_t*>(buffer_memory::reallocate(data_, capacity_, size_, cap, &got));
    capacity_ = got;
  }

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace mibz2::base
