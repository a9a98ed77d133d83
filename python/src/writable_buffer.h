// The memory of a Python object that a read fills, as io's readinto takes it: writable and
// C-contiguous (a bytearray, a memoryview of one or a slice of it with step 1, an array, an mmap, a
// contiguous numpy array), its bytes from data() to data() + size(). A strided or reversed view, or
// a read-only object, is refused with a TypeError before anything is written: the read writes
// size() bytes forward from data(), which for such a view is not the memory it shows.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>

namespace mibz2::python {

class WritableBuffer {
 public:
  // Raises TypeError (pybind11::error_already_set) naming `function` when `object` is not such a
  // buffer. Held with the GIL; data() may be written without it while this object lives.
  WritableBuffer(pybind11::handle object, const char* function);
  ~WritableBuffer() { PyBuffer_Release(&view_); }
  WritableBuffer(const WritableBuffer&) = delete;
  WritableBuffer& operator=(const WritableBuffer&) = delete;

  uint8_t* data() const { return static_cast<uint8_t*>(view_.buf); }
  size_t size() const { return static_cast<size_t>(view_.len); }

 private:
  Py_buffer view_{};
};

}  // namespace mibz2::python
