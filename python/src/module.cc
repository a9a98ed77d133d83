// mibz2._core: the binding of the engine's front door (catalog/front_door.h) for the Python module
// (python/mibz2/__init__.py builds the file objects, defaults and errors users see on top of it). pybind11, from Debian (pybind11-dev):
// header-only, C++ types and exceptions map to Python's without hand-written reference counting,
// and it is what Debian builds its own C++ extensions with.
//
// The GIL is released around everything that waits (an index build, a read that decodes), so
// Python threads reading one or several files keep the decoder pool busy. Errors are OSError with
// the errno of the base::Status and its message, which names the file (and the block, for damage);
// a read that met damage or an index that does not match the file is EIO, as os.read of the mount.
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
#include "base/settings.h"
#include "catalog/file_report.h"
#include "catalog/front_door.h"
#include "catalog/name_mapping.h"
#include "catalog/read_handle.h"
#include "engine/decoder_pool.h"
#include "front_doors.h"
#include "gil.h"
#include "index/bzip2_head.h"
#include "index/index_dir.h"
#include "io/source_bytes.h"
#include "py_args.h"
#include "s3_args.h"
#include "version.h"
#include "writable_buffer.h"

namespace py = pybind11;
using namespace mibz2;
using catalog::ReadHandle;

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

// A read's failure as Python's io reports one: damage and an index that does not match the file
// (EBADMSG, bad input, inside) are EIO, as a read of the mount gives.
[[noreturn]] void raise_read_failure(const base::Status& s) {
  raise_status(s.code() == EBADMSG ? base::Status::error(EIO, s.message()) : s);
}

// mibz2.info()'s dict (catalog/file_report.h): the fields of `mibz2 info --json`, the same names.
py::dict report_dict(const catalog::FileReport& r) {
  py::list damaged;
  for (const catalog::DamagedBlockReport& d : r.damaged_blocks) {
    py::dict b;
    b["block"] = d.block;
    b["start_bit"] = d.start_bit;
    b["end_bit"] = d.end_bit;
    b["offset"] = d.offset;
    b["size"] = d.size;
    b["kind"] = d.kind;
    damaged.append(b);
  }
  // Names as the filesystem holds them: bytes that are not UTF-8 as surrogate escapes (os.fsdecode).
  auto fs_str = [](const std::string& s) {
    return py::reinterpret_steal<py::object>(
        PyUnicode_DecodeFSDefaultAndSize(s.data(), static_cast<Py_ssize_t>(s.size())));
  };
  py::dict out;
  out["file"] = fs_str(r.file);
  out["compressed_size"] = r.compressed_size;
  out["decompressed_size"] = r.decompressed_size;
  out["lines"] = r.lines ? py::object(py::int_(*r.lines)) : py::object(py::none());
  if (!r.lines) out["lines_unknown"] = fs_str(r.lines_unknown);
  out["streams"] = r.streams;
  out["blocks"] = r.blocks;
  out["damaged_blocks"] = damaged;
  out["offsets_shifted"] = r.offsets_shifted;
  out["stream_crc_mismatch"] = r.stream_crc_mismatch;
  out["truncated_at_bit"] = r.truncated_at_bit;
  out["trailing_bytes"] = r.trailing_bytes;
  py::dict index;
  index["path"] = fs_str(r.index_path);
  index["state"] = r.index_state;
  out["index"] = index;
  return out;
}

// One open file: its read handle, and the front door that must outlive it.
struct PyFile {
  std::shared_ptr<catalog::FrontDoor> door;
  std::unique_ptr<ReadHandle> handle;
  std::string shown;  // names the file in messages

  uint64_t size() const { return handle->size(); }
};

// A front door made for the settings, held by the Python object that asked for it.
struct PyEngine {
  std::shared_ptr<catalog::FrontDoor> door;

  // Loads or builds (`force`: builds even when one is current) the index of `path` (bytes, as
  // os.fsencode gives), calling `progress(done, total)` (compressed bytes) while it is built and
  // once at its end (done == total, see FrontDoor::obtain); returns what mibz2.info() returns.
  // Ctrl-C, or an exception in `progress`, stops the wait (the build goes on in the background).
  py::dict index(const std::string& path, const std::string& shown, bool force, py::object progress) {
    const catalog::FileRef file = door->file(path);
    const catalog::IndexStatus got = obtain(file, force, progress);
    if (!got.ready()) raise_status(got.error.prefixed(shown + ": "));
    return report_dict(catalog::report_file(shown, got));
  }

  std::unique_ptr<PyFile> open(const std::string& path, const std::string& shown, py::object progress) {
    const catalog::FileRef file = door->file(path);
    const catalog::IndexStatus got = obtain(file, false, progress);
    if (!got.ready()) raise_status(got.error.prefixed(shown + ": "));
    base::Result<std::unique_ptr<ReadHandle>> opened = [&] {
      python::GilReleased unlocked;
      return door->open(file);
    }();
    if (!opened.ok()) raise_status(opened.status().prefixed(shown + ": "));
    return std::unique_ptr<PyFile>(new PyFile{door, std::move(opened).value(), shown});
  }

 private:
  catalog::IndexStatus obtain(const catalog::FileRef& file, bool rebuild, const py::object& progress) {
    catalog::IndexStatus got;
    bool stopped = false;
    {
      python::GilReleased unlocked;
      got = door->obtain(file, rebuild, [&](uint64_t done, uint64_t total) {
        python::GilRetaken locked(unlocked);
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

// ReadHandle::read into a writable, C-contiguous buffer, with the GIL released; the buffer stays
// valid (its owner holds it) meanwhile.
size_t read_into(PyFile& f, py::handle buffer, python::Offset offset) {
  const python::WritableBuffer out(buffer, "readinto");
  const catalog::ReadResult r = [&] {
    python::GilReleased unlocked;
    return f.handle->read(offset.value, out.size(), out.data());
  }();
  if (!r.ok()) raise_read_failure(r.status(f.shown));
  return r.bytes;
}

// ReadHandle::line_count as (count, "") or (None, why), with the GIL released (a distrusted index is
// built again first).
std::tuple<std::optional<uint64_t>, std::string> line_count(PyFile& f) {
  const base::Result<ReadHandle::LineCount> got = [&] {
    python::GilReleased unlocked;
    return f.handle->line_count();
  }();
  if (!got.ok()) raise_read_failure(got.status().prefixed(f.shown + ": "));
  return {got->count, got->count ? std::string() : f.shown + ": " + got->unknown_why};
}

// ReadHandle::line_offset with the GIL released: it may decode the block that holds the line.
uint64_t line_offset(PyFile& f, python::LineNumber n) {
  const base::Result<uint64_t> start = [&] {
    python::GilReleased unlocked;
    return f.handle->line_offset(n.value);
  }();
  if (!start.ok()) raise_read_failure(start.status().prefixed(f.shown + ": "));
  return *start;
}

// Up to `size` bytes at `offset` as a new bytes object, filled with the GIL released: fewer at
// the end of the file, or where an error stops the read after some bytes (the next read there
// raises it).
py::bytes read_bytes(PyFile& f, python::ByteCount count, python::Offset at) {
  const uint64_t offset = at.value;
  size_t length = count.value;
  const uint64_t size = f.size();
  if (offset >= size) return py::bytes();
  length = static_cast<size_t>(std::min<uint64_t>(length, size - offset));
  PyObject* out = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(length));
  if (!out) throw py::error_already_set();
  auto* data = reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(out));
  size_t done = 0;
  base::Status failure;
  {
    python::GilReleased unlocked;
    while (done < length) {
      const catalog::ReadResult r = f.handle->read(offset + done, length - done, data + done);
      if (!r.ok()) {
        failure = r.status(f.shown);
        break;
      }
      if (r.bytes == 0) break;
      done += r.bytes;
    }
  }
  if (!failure.ok() && done == 0) {
    Py_DECREF(out);
    raise_read_failure(failure);
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

  py::class_<PyFile>(m, "File", "One open of an indexed .bz2 file, read by decompressed position.")
      .def_property_readonly("size", &PyFile::size, "The decompressed size in bytes.")
      .def("readinto", &read_into, py::arg("buffer"), py::arg("offset"),
           "Reads at `offset` into the writable, C-contiguous buffer; returns the byte count (0 at the end).")
      .def("pread", &read_bytes, py::arg("size"), py::arg("offset"),
           "Up to `size` bytes at `offset` (fewer at the end, or before damage), as os.pread.")
      .def("line_count", &line_count,
           "(lines, \"\") as sed counts them, or (None, why) when the index cannot tell (damage, an old index).")
      .def("line_offset", &line_offset, py::arg("n"),
           "The offset where line `n` (1-based) starts: the size past the last line. OSError ENODATA "
           "(with why) when the index cannot tell, EINVAL for 0.");

  py::class_<PyEngine>(m, "Engine", "A decoder pool, block cache and index store shared by opens.")
      .def(py::init([](python::ThreadCount threads, python::CacheSize cache_size, const std::string& index_dir,
                       py::object s3) {
             return PyEngine{
                 python::front_door_for({threads.value, cache_size.value, index_dir, python::s3_options_arg(s3)})};
           }),
           py::arg("threads"), py::arg("cache_size"), py::arg("index_dir") = "", py::arg("s3") = py::none(),
           "`s3`: a dict of io::S3Options' fields (mibz2/_s3_options.py makes it), over the environment's.")
      .def_property_readonly("threads", [](const PyEngine& e) { return e.door->engine().pool().threads(); })
      .def_property_readonly("cache_size", [](const PyEngine& e) { return e.door->engine().options().cache_size; })
      .def_property_readonly("index_dir", [](const PyEngine& e) { return py::bytes(e.door->store().dir()); })
      .def_property_readonly("index_dir_problem", [](const PyEngine& e) { return py::bytes(e.door->store().problem()); },
                             "Why the index directory is not used (a sentence naming it), or empty.")
      .def("index", &PyEngine::index, py::arg("path"), py::arg("shown"), py::arg("force") = false,
           py::arg("progress") = py::none())
      .def("open", &PyEngine::open, py::arg("path"), py::arg("shown"), py::arg("progress") = py::none());

  m.def("parse_size", [](python::Size size) { return size.value; }, py::arg("size"),
        "Bytes from an int or a SIZE string, by the rule of mibz2 and mibz2fs (K, M, G, T: powers of 1024).");
  m.def("check_offset", [](python::Offset offset) { return offset.value; }, py::arg("offset"),
        "`offset` when it may be a position (0 to 2**63 - 1, as io's), else ValueError or OverflowError.");
  m.def("thread_count", [](python::ThreadCount n) { return n.value; }, py::arg("threads"),
        "A decoder thread count (1 to 1024) from an int or a str, as mibz2 -j and mibz2fs -o threads.");
  m.def("cache_size", [](python::CacheSize size) {
    std::string warning;
    (void)base::check_cache_size(size.value, base::physical_memory(), &warning);
    if (!warning.empty() && PyErr_WarnEx(PyExc_RuntimeWarning, warning.c_str(), 1) != 0) throw py::error_already_set();
    return size.value;
  }, py::arg("cache_size"), "A block cache size (a SIZE, at least 1M), with a RuntimeWarning above physical memory.");
  m.def("default_index_dir", []() -> std::optional<py::bytes> {
    const index::DefaultIndexDir d = index::default_index_dir_of_process();
    if (d.dir.empty()) return std::nullopt;
    return py::bytes(d.dir);
  }, "The index directory of the rule every front end follows when none is named (man mibz2fs, FILES), or None.");
  m.def("release_sessions", &python::release_front_doors,
        "Forgets this process's engines; each stops when its last open file is closed.");
  m.def("default_decoder_threads", &engine::default_decoder_threads, "CPUs this process may run on (affinity).");
  m.def("default_cache_bytes", &engine::default_cache_size, "1 GiB, or a quarter of physical memory if less.");
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
