#include "py_args.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "base/settings.h"

namespace py = pybind11;

namespace mibz2::python {
namespace {

// The Python int `src` stands for (anything with __index__, as os.pread takes), or TypeError.
py::int_ as_int(py::handle src) {
  PyObject* n = PyNumber_Index(src.ptr());
  if (!n) throw py::error_already_set();
  return py::reinterpret_steal<py::int_>(n);
}

// The integers one kind of argument may be.
struct Range {
  const char* what;       // names the argument in messages ("offset")
  uint64_t least;         // below: ValueError
  uint64_t most;          // above: OverflowError, or `most` itself when saturating
  bool saturating;
};

uint64_t in_range(py::handle src, const Range& range) {
  const py::int_ n = as_int(src);
  const std::string shown = py::str(static_cast<py::handle>(n));
  const auto too_small = [&] {
    raise(PyExc_ValueError, range.least == 0 ? std::string(range.what) + " must not be negative: " + shown
                                             : std::string(range.what) + " must be at least " +
                                                   std::to_string(range.least) + ": " + shown);
  };
  const int negative = PyObject_RichCompareBool(n.ptr(), py::int_(0).ptr(), Py_LT);
  if (negative < 0) throw py::error_already_set();
  if (negative) too_small();
  const unsigned long long value = PyLong_AsUnsignedLongLong(n.ptr());
  const bool beyond_64_bits = value == static_cast<unsigned long long>(-1) && PyErr_Occurred();
  if (beyond_64_bits) PyErr_Clear();
  if (beyond_64_bits || value > range.most) {
    if (range.saturating) return range.most;
    raise(PyExc_OverflowError,
          std::string(range.what) + " " + shown + " is too large (the most is " + std::to_string(range.most) + ")");
  }
  if (value < range.least) too_small();
  return value;
}

// The text a rule of base/settings.h reads: a str as it is, an int in decimal (so that the rule
// alone decides, negative and huge numbers included), else TypeError.
std::string setting_text(py::handle src, const char* what) {
  if (PyUnicode_Check(src.ptr())) return src.cast<std::string>();
  if (PyIndex_Check(src.ptr())) return py::str(static_cast<py::handle>(as_int(src)));
  raise(PyExc_TypeError,
        std::string(what) + " must be an int or a str, not " + Py_TYPE(src.ptr())->tp_name);
}

}  // namespace

void raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

Offset offset_arg(py::handle src) {
  return {in_range(src, {"offset", 0, static_cast<uint64_t>(std::numeric_limits<int64_t>::max()), false})};
}

ByteCount byte_count_arg(py::handle src) {
  return {static_cast<size_t>(in_range(src, {"size", 0, static_cast<uint64_t>(PY_SSIZE_T_MAX), false}))};
}

LineNumber line_number_arg(py::handle src) {
  return {in_range(src, {"line number", 1, std::numeric_limits<uint64_t>::max(), true})};
}

Size size_arg(py::handle src) {
  const std::string text = setting_text(src, "size");
  const std::optional<uint64_t> bytes = base::parse_size(text);
  if (!bytes) raise(PyExc_ValueError, base::not_a_size(text));
  return {*bytes};
}

CacheSize cache_size_arg(py::handle src) {
  const Size size = size_arg(src);
  std::string warning;  // none without the machine's memory: _core.cache_size warns, an argument does not
  const std::string why = base::check_cache_size(size.value, 0, &warning);
  if (!why.empty()) raise(PyExc_ValueError, why);
  return {size.value};
}

ThreadCount thread_count_arg(py::handle src) {
  const std::string text = setting_text(src, "threads");
  const std::optional<unsigned> n = base::parse_threads(text);
  if (!n) raise(PyExc_ValueError, base::not_a_thread_count(text));
  return {*n};
}

}  // namespace mibz2::python
