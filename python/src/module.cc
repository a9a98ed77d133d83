// mibz2._core: the binding of the engine for the Python module (python/mibz2/__init__.py builds the
// file objects, defaults and errors users see on top of it). pybind11, from Debian (pybind11-dev):
// header-only, C++ types and exceptions map to Python's without hand-written reference counting,
// and it is what Debian builds its own C++ extensions with.
//
// The GIL is released around everything that waits (an index build, a read that decodes), so
// Python threads reading one or several files keep the decoder pool busy. Errors are OSError with
// the errno of the base::Status and its message, which names the file (and the block, for damage).
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "base/log_sink.h"
#include "catalog/name_mapping.h"
#include "engine/decoder_pool.h"
#include "index/bzip2_head.h"
#include "io/source_bytes.h"
#include "open_file.h"
#include "programs/info_json.h"
#include "session.h"
#include "version.h"

namespace py = pybind11;
using namespace mibz2;
using python::OpenFile;
using python::Session;

namespace {

// Sets OSError(errno, message) and throws it into pybind11. The message keeps bytes that are not
// UTF-8 (a file name) as backslash escapes.
[[noreturn]] void raise_status(const base::Status& s) {
  PyObject* message = PyUnicode_DecodeUTF8(s.message().data(), static_cast<Py_ssize_t>(s.message().size()),
                                           "backslashreplace");
  if (message) {
    PyObject* args = Py_BuildValue("(iN)", s.code(), message);
    if (args) {
      PyErr_SetObject(PyExc_OSError, args);
      Py_DECREF(args);
    }
  }
  throw py::error_already_set();
}

// A Session made for the settings, held by the Python object that asked for it.
struct PyEngine {
  std::shared_ptr<Session> session;

  // Loads or builds the index of `path` (bytes, as os.fsencode gives), calling `progress(done,
  // total)` (compressed bytes) while it is built and once at its end (done == total, see
  // Session::obtain); returns `mibz2 info --json`'s object as bytes.
  // Ctrl-C, or an exception in `progress`, stops the wait (the build goes on in the background).
  py::bytes index(const std::string& path, const std::string& shown, bool rebuild, py::object progress) {
    const catalog::FileRef file = session->file(path);
    const catalog::IndexStatus got = obtain(file, rebuild, progress);
    if (!got.ready()) raise_status(got.error.prefixed(shown + ": "));
    return py::bytes(programs::info_json(shown, got));
  }

  std::unique_ptr<OpenFile> open(const std::string& path, const std::string& shown, py::object progress) {
    const catalog::FileRef file = session->file(path);
    const catalog::IndexStatus got = obtain(file, false, progress);
    if (!got.ready()) raise_status(got.error.prefixed(shown + ": "));
    base::Result<std::unique_ptr<OpenFile>> opened = [&] {
      py::gil_scoped_release unlocked;
      return OpenFile::open(session, file, shown);
    }();
    if (!opened.ok()) raise_status(opened.status());
    return std::move(opened).value();
  }

 private:
  catalog::IndexStatus obtain(const catalog::FileRef& file, bool rebuild, const py::object& progress) {
    catalog::IndexStatus got;
    bool stopped = false;
    {
      py::gil_scoped_release unlocked;
      got = session->obtain(file, rebuild, [&](uint64_t done, uint64_t total) {
        py::gil_scoped_acquire locked;
        try {
          // Not while queued (total 0): a callback may divide by the total.
          if (!progress.is_none() && total != 0) progress(done, total);
          if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        } catch (py::error_already_set& e) {
          e.restore();  // raised below, once the wait is over
          stopped = true;
          return false;
        }
        return true;
      });
    }
    if (stopped) throw py::error_already_set();
    return got;
  }
};

// OpenFile::read with the GIL released; the buffer stays valid (its owner holds it) meanwhile.
size_t read_into(OpenFile& f, uint64_t offset, py::buffer buffer) {
  py::buffer_info info = buffer.request(/*writable=*/true);
  const size_t length = static_cast<size_t>(info.size * info.itemsize);
  const base::Result<size_t> n = [&] {
    py::gil_scoped_release unlocked;
    return f.read(offset, length, static_cast<uint8_t*>(info.ptr));
  }();
  if (!n.ok()) raise_status(n.status());
  return *n;
}

// OpenFile::line_count as (count, "") or (None, why), with the GIL released (a distrusted index is
// built again first).
std::tuple<std::optional<uint64_t>, std::string> line_count(OpenFile& f) {
  const base::Result<OpenFile::LineCount> got = [&] {
    py::gil_scoped_release unlocked;
    return f.line_count();
  }();
  if (!got.ok()) raise_status(got.status());
  return {got->count, got->unknown_why};
}

// OpenFile::line_start with the GIL released: it may decode the block that holds the line.
uint64_t line_start(OpenFile& f, uint64_t n) {
  const base::Result<uint64_t> start = [&] {
    py::gil_scoped_release unlocked;
    return f.line_start(n);
  }();
  if (!start.ok()) raise_status(start.status());
  return *start;
}

// Up to `length` bytes at `offset` as a new bytes object, filled with the GIL released: fewer at
// the end of the file, or where an error stops the read after some bytes (the next read there
// raises it).
py::bytes read_bytes(OpenFile& f, uint64_t offset, size_t length) {
  const uint64_t size = f.size();
  if (offset >= size) return py::bytes();
  length = static_cast<size_t>(std::min<uint64_t>(length, size - offset));
  PyObject* out = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(length));
  if (!out) throw py::error_already_set();
  auto* data = reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(out));
  size_t done = 0;
  base::Status failure;
  {
    py::gil_scoped_release unlocked;
    while (done < length) {
      base::Result<size_t> n = f.read(offset + done, length - done, data + done);
      if (!n.ok()) {
        failure = n.status();
        break;
      }
      if (*n == 0) break;
      done += *n;
    }
  }
  if (!failure.ok() && done == 0) {
    Py_DECREF(out);
    raise_status(failure);
  }
  if (done < length && _PyBytes_Resize(&out, static_cast<Py_ssize_t>(done)) != 0) throw py::error_already_set();
  return py::reinterpret_steal<py::bytes>(out);
}

// The mount's listing of one directory (catalog/name_mapping.h): entries (name, kind, is_bzip2) with
// names as bytes and kind one of "dir", "file", "link", "other"; returns (shown name, source name,
// kind, decompressed) for each, sorted by shown name.
std::vector<std::tuple<py::bytes, py::bytes, std::string, bool>> map_directory(
    const std::vector<std::tuple<std::string, std::string, bool>>& entries) {
  using Type = catalog::SourceEntry::Type;
  std::vector<catalog::SourceEntry> in;
  in.reserve(entries.size());
  for (const auto& [name, kind, bzip2] : entries) {
    const Type type = kind == "dir" ? Type::kDirectory : kind == "file" ? Type::kRegular
                      : kind == "link" ? Type::kSymlink : Type::kOther;
    in.push_back(catalog::SourceEntry{name, type, bzip2, {}});
  }
  std::vector<catalog::NamingNote> notes;
  std::vector<std::tuple<py::bytes, py::bytes, std::string, bool>> out;
  for (const catalog::ShownEntry& e : catalog::map_directory(std::move(in), &notes)) {
    const char* kind = e.type == Type::kDirectory ? "dir" : e.type == Type::kRegular ? "file"
                       : e.type == Type::kSymlink ? "link" : "other";
    out.emplace_back(py::bytes(e.name), py::bytes(e.source_name), kind, e.decompressed);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "The mibz2 engine (decoder pool, block cache, index store); use the mibz2 package.";
  m.attr("__version__") = MIBZ2FS_VERSION;
  // The engine's log (damage found, indexes not stored) is the daemon's; here errors are raised.
  // MIBZ2_LOG=1 sends it to stderr, escaped as mibz2's is.
  spdlog::set_default_logger(
      base::escaping_logger("mibz2", std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
  const char* log = std::getenv("MIBZ2_LOG");
  spdlog::set_level(log && *log && std::string(log) != "0" ? spdlog::level::info : spdlog::level::off);

  py::class_<OpenFile>(m, "File", "One open of an indexed .bz2 file, read by decompressed position.")
      .def_property_readonly("size", &OpenFile::size, "The decompressed size in bytes.")
      .def("readinto", &read_into, py::arg("offset"), py::arg("buffer"),
           "Reads at `offset` into the writable buffer; returns the byte count (0 at the end).")
      .def("pread", &read_bytes, py::arg("offset"), py::arg("length"),
           "Up to `length` bytes at `offset` (fewer at the end, or before damage).")
      .def("line_count", &line_count,
           "(lines, \"\") as sed counts them, or (None, why) when the index cannot tell (damage, an old index).")
      .def("line_start", &line_start, py::arg("n"),
           "The offset where line `n` (1-based) starts: the size past the last line. OSError ENODATA "
           "(with why) when the index cannot tell, EINVAL for 0.");

  py::class_<PyEngine>(m, "Engine", "A decoder pool, block cache and index store shared by opens.")
      .def(py::init([](unsigned threads, uint64_t cache_bytes, const std::string& index_dir) {
             python::SessionOptions o{threads, cache_bytes, index_dir};
             return PyEngine{python::session_for(o)};
           }),
           py::arg("threads") = 0, py::arg("cache_bytes") = 0, py::arg("index_dir") = "")
      .def_property_readonly("threads", [](const PyEngine& e) { return e.session->engine().pool().threads(); })
      .def_property_readonly("cache_bytes", [](const PyEngine& e) { return e.session->engine().options().cache_bytes; })
      .def_property_readonly("index_dir", [](const PyEngine& e) { return py::bytes(e.session->store().dir()); })
      .def_property_readonly("index_dir_problem", [](const PyEngine& e) { return py::bytes(e.session->store().problem()); },
                             "Why the index directory is not used (a sentence naming it), or empty.")
      .def("index", &PyEngine::index, py::arg("path"), py::arg("shown"), py::arg("rebuild") = false,
           py::arg("progress") = py::none())
      .def("open", &PyEngine::open, py::arg("path"), py::arg("shown"), py::arg("progress") = py::none());

  m.def("release_sessions", &python::release_sessions,
        "Forgets this process's engines; each stops when its last open file is closed.");
  m.def("default_decoder_threads", &engine::default_decoder_threads, "CPUs this process may run on (affinity).");
  m.def("default_cache_bytes", &engine::default_cache_bytes, "1 GiB, or a quarter of physical memory if less.");
  m.def("decompressed_name", [](const std::string& name) -> std::optional<py::bytes> {
    if (auto n = catalog::decompressed_name(name)) return py::bytes(*n);
    return std::nullopt;
  }, py::arg("name"), "The name the mount shows a compressed-looking name under, or None.");
  m.def("starts_like_bzip2", [](int fd) {
    const int r = index::starts_like_bzip2(fd);
    if (r < 0) raise_status(base::Status::os_error(-r, io::errno_words(-r)));
    return r == 1;
  }, py::arg("fd"), "Whether the open file's head is a bzip2 stream header (BZh1..BZh9), as the mount checks.");
  m.def("map_directory", &map_directory, py::arg("entries"),
        "The mount's listing of a directory: [(shown, source, kind, decompressed)] sorted by shown name.");
}
