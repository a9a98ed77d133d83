#include "s3_args.h"

#include <optional>
#include <string>

#include "py_args.h"

namespace py = pybind11;

namespace mibz2::python {
namespace {

std::optional<std::string> text_field(py::handle value, const std::string& name) {
  if (value.is_none()) return std::nullopt;
  if (!PyUnicode_Check(value.ptr()))
    raise(PyExc_TypeError, "S3 option " + name + " must be a str, not " + Py_TYPE(value.ptr())->tp_name);
  return value.cast<std::string>();
}

}  // namespace

io::S3Options s3_options_arg(py::handle fields) {
  io::S3Options o;
  if (fields.is_none()) return o;
  if (!PyDict_Check(fields.ptr())) raise(PyExc_TypeError, "S3 options must be a dict");
  for (const auto& [k, value] : py::reinterpret_borrow<py::dict>(fields)) {
    if (!PyUnicode_Check(k.ptr())) raise(PyExc_TypeError, "S3 option names must be str");
    const std::string name = k.cast<std::string>();
    if (name == "anon") {
      if (!PyBool_Check(value.ptr()))
        raise(PyExc_TypeError, "S3 option anon must be a bool, not " + std::string(Py_TYPE(value.ptr())->tp_name));
      o.anon = value.ptr() == Py_True;
      continue;
    }
    std::optional<std::string>* field = name == "key"            ? &o.key
                                        : name == "secret"       ? &o.secret
                                        : name == "token"        ? &o.token
                                        : name == "region"       ? &o.region
                                        : name == "endpoint_url" ? &o.endpoint_url
                                        : name == "profile"      ? &o.profile
                                                                 : nullptr;
    if (!field) raise(PyExc_ValueError, "no S3 option named " + name);
    *field = text_field(value, name);
  }
  return o;
}

}  // namespace mibz2::python
