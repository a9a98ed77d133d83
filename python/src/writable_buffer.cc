#include "writable_buffer.h"

#include <string>

namespace mibz2::python {

WritableBuffer::WritableBuffer(pybind11::handle object, const char* function) {
  // Without PyBUF_STRIDES an exporter must hand out one contiguous run of bytes or fail; the check
  // after it guards against an exporter that ignores the flags.
  const bool got = PyObject_GetBuffer(object.ptr(), &view_, PyBUF_WRITABLE) == 0;
  if (got && PyBuffer_IsContiguous(&view_, 'C')) return;
  if (got) PyBuffer_Release(&view_);
  PyErr_Clear();
  const std::string message = std::string(function) + "() argument must be a writable, C-contiguous bytes-like object, not " +
                              Py_TYPE(object.ptr())->tp_name;
  PyErr_SetString(PyExc_TypeError, message.c_str());
  throw pybind11::error_already_set();
}

}  // namespace mibz2::python
