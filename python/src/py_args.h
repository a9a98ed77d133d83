// The numbers Python hands the binding, checked at the call as Python's own io and os functions
// check theirs: a TypeError for what is not an integer, a ValueError for what the rule refuses, an
// OverflowError for what C++ cannot hold, instead of pybind11's TypeError that prints the signature
// and the arguments. Each kind of number is a type the binding's functions take, so that every
// integer crossing into C++ goes through one of these casters; sizes and thread counts follow the
// rules of the programs (base/settings.h), so that a value means the same at every door.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace mibz2::python {

// A decompressed position: 0 to 2^63 - 1, an off_t as os.pread takes it.
struct Offset {
  uint64_t value = 0;
};
// A count of bytes to read: 0 to the most a bytes object can hold (PY_SSIZE_T_MAX).
struct ByteCount {
  size_t value = 0;
};
// A line number: 1 or more. Any number past 2^64 - 1 stands for 2^64 - 1: past the last line too.
struct LineNumber {
  uint64_t value = 0;
};
// A SIZE as base::parse_size reads it, from an int (bytes) or a str ("64MiB", "1.5G").
struct Size {
  uint64_t value = 0;
};
// A block cache's size: a Size that base::check_cache_size accepts.
struct CacheSize {
  uint64_t value = 0;
};
// A thread count as base::parse_threads reads it (1 to 1024), from an int or a str.
struct ThreadCount {
  unsigned value = 0;
};

// Sets the Python exception `type` with `message` and throws it into pybind11.
[[noreturn]] void raise(PyObject* type, const std::string& message);

// The checks, each throwing the Python exception set (pybind11::error_already_set).
Offset offset_arg(pybind11::handle src);
ByteCount byte_count_arg(pybind11::handle src);
LineNumber line_number_arg(pybind11::handle src);
Size size_arg(pybind11::handle src);
CacheSize cache_size_arg(pybind11::handle src);
ThreadCount thread_count_arg(pybind11::handle src);

}  // namespace mibz2::python

namespace pybind11::detail {

// A caster for each type above: loading never declines (a decline would be pybind11's TypeError
// with the signature); it succeeds or raises the check's exception.
#define MIBZ2_PY_ARG_CASTER(Type, check, python_name)                                       \
  template <>                                                                               \
  struct type_caster<mibz2::python::Type> {                                                 \
    PYBIND11_TYPE_CASTER(mibz2::python::Type, const_name(python_name));                     \
    bool load(handle src, bool) {                                                           \
      value = mibz2::python::check(src);                                                    \
      return true;                                                                          \
    }                                                                                       \
    static handle cast(const mibz2::python::Type& v, return_value_policy, handle) {         \
      return PyLong_FromUnsignedLongLong(static_cast<unsigned long long>(v.value));         \
    }                                                                                       \
  };

MIBZ2_PY_ARG_CASTER(Offset, offset_arg, "int")
MIBZ2_PY_ARG_CASTER(ByteCount, byte_count_arg, "int")
MIBZ2_PY_ARG_CASTER(LineNumber, line_number_arg, "int")
MIBZ2_PY_ARG_CASTER(Size, size_arg, "int | str")
MIBZ2_PY_ARG_CASTER(CacheSize, cache_size_arg, "int | str")
MIBZ2_PY_ARG_CASTER(ThreadCount, thread_count_arg, "int | str")

#undef MIBZ2_PY_ARG_CASTER

}  // namespace pybind11::detail
