// mibz2 cat: the decompressed content of each FILE, in order, on standard output; "-" (or no FILE)
// is standard input, decoded as a stream, and so is a FILE that is not a regular file (a fifo, a
// pipe, a device: stream_input.h).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bz2/stream_parser.h"
#include "catalog/catalog.h"
#include "catalog/read_handle.h"
#include "engine/engine.h"
#include "engine/reader.h"
#include "index/line_map.h"
#include "index/source_window.h"
#include "io/fd_io.h"
#include "io/source_bytes.h"
#include "io/source_url.h"
#include "programs/cli_common.h"
#include "programs/commands.h"
#include "programs/index_access.h"
#include "programs/stream_input.h"

namespace mibz2::programs {
namespace {

// How one file went: its exit status, and whether cat goes on with the next file. As with
// bzip2 -dc, a file of which nothing can be written (it cannot be opened, or is not bzip2 at all)
// is skipped after its message; damage or truncation inside a file, or output that cannot be
// written, stops cat there.
struct Outcome {
  int status;
  bool go_on;
};
constexpr Outcome kWritten{kExitOk, true};
Outcome skipped(int status) { return {status, true}; }
Outcome stopped(int status) { return {status, false}; }

Outcome write_failed(int err) {
  std::fprintf(stderr, "mibz2 cat: writing output: %s\n", std::strerror(err));
  return stopped(kExitEnvironment);
}

// One thread streaming through the whole file, like bzip2 -dc, reading it with pread a few MB at a
// time: a file truncated meanwhile is an error that says so, never a SIGBUS.
Outcome cat_one(const char* path, bz2::BlockDecoder& decoder) {
  struct stat st;
  const int fd = io::open_regular(path, &st);
  if (fd < 0) {
    std::fprintf(stderr, "mibz2 cat: %s: %s\n", path, fd == -EINVAL ? "not a regular file" : std::strerror(-fd));
    return skipped(kExitEnvironment);
  }
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  const io::FdBytes bytes(fd, static_cast<uint64_t>(st.st_size));
  index::SourceWindow input(bytes);
  int write_errno = 0;
  bz2::SequentialSink sink;
  sink.write = [&](const uint8_t* data, size_t size) {
    write_errno = io::write_all(STDOUT_FILENO, data, size);
    return write_errno == 0;
  };
  sink.warn = [&](const std::string& message) { std::fprintf(stderr, "mibz2 cat: %s: %s\n", path, message.c_str()); };
  const bz2::Error e = bz2::decode_sequential(input, decoder, sink);
  ::close(fd);
  if (write_errno) return write_failed(write_errno);
  // The input ended early because the file could not be read to its end: the file's fault, not
  // its content's, whatever the decoder made of the bytes it had.
  if (input.read_error() || input.shrank()) {
    std::fprintf(stderr, "mibz2 cat: %s: %s\n", path,
                 input.read_error() ? input.read_failure().describe().c_str() : "the file shrank while it was read");
    return stopped(kExitEnvironment);
  }
  if (e) {
    std::fprintf(stderr, "mibz2 cat: %s: %s\n", path, bz2::to_string(e).c_str());
    // Within the first stream header: not bzip2 (or empty), nothing of it was written.
    return e.bit_offset < bz2::kStreamHeaderBits ? skipped(kExitDataError) : stopped(kExitDataError);
  }
  return kWritten;
}

// The end of the output of a whole file or of a range that reaches the end: like bzip2 -dc, a file
// cut short or a stream whose CRC does not match is an error even when every block was written.
Outcome check_tail(const char* path, const index::BlockIndex& idx) {
  if (idx.truncated_at_bit) {
    std::fprintf(stderr, "mibz2 cat: %s: file ends inside a stream at bit %llu (truncated)\n",
                 path, static_cast<unsigned long long>(idx.truncated_at_bit));
    return stopped(kExitDataError);
  }
  if (idx.flags & index::BlockIndex::kStreamCrcMismatch) {
    std::fprintf(stderr, "mibz2 cat: %s: stream CRC mismatch\n", path);
    return stopped(kExitDataError);
  }
  return kWritten;
}

// A file that has no index and cannot get one: unreadable (1) or not bzip2 (2); nothing written.
Outcome no_index(const catalog::IndexStatus& got) { return skipped(exit_status_of(got.error)); }

// The file's read handle, its index loaded or built first; or, said on stderr, why there is none.
struct Opened {
  std::unique_ptr<catalog::ReadHandle> handle;
  Outcome failed = kWritten;  // what to return when there is no handle
};
Opened open_handle(const char* path, IndexAccess& access, const catalog::FileRef& file) {
  if (const catalog::IndexStatus got = access.obtain(file, path, false, false); !got.ready()) return {nullptr, no_index(got)};
  base::Result<std::unique_ptr<catalog::ReadHandle>> opened = access.door().open(file);
  if (!opened.ok()) {
    std::fprintf(stderr, "mibz2 cat: %s: %s\n", path, opened.status().message().c_str());
    return {nullptr, skipped(kExitEnvironment)};
  }
  return {std::move(opened).value(), kWritten};
}

// A read or a line search that failed (the read handle's words name the place and what was
// found): damage and an index that does not match the file are the input's fault (2), the rest
// (a read error, the file changed while it was read, no memory) the machine's (1).
Outcome read_failed(const char* path, const base::Status& why) {
  std::fprintf(stderr, "mibz2 cat: %s: %s\n", path, why.message().c_str());
  return stopped(exit_status_of(why));
}

// Writes a parallel pass's blocks, in order, to standard output; stops at the first damaged block
// (what it is goes in `damage`) or failed write (its errno in `write_errno`).
struct BlockWriter {
  int write_errno = 0;
  std::string damage;
  bool wrote = false;  // some of the file went out

  bool operator()(const index::BlockStream::Block& b) {
    if (b.damaged()) {
      damage = "block " + std::to_string(b.number) + " is damaged (" + index::describe_damage(b.record) +
               "): its bytes cannot be read";
      return false;
    }
    wrote = wrote || !b.bytes.empty();
    write_errno = io::write_all(STDOUT_FILENO, b.bytes.data(), b.bytes.size());
    return write_errno == 0;
  }
};

// A whole file with no current index: decoded in parallel in one pass, in order, storing the
// index found on the way (so the next cat, range or mount of it starts at once).
Outcome cat_streaming(const char* path, IndexAccess& access, const catalog::FileRef& file) {
  BlockWriter writer;
  access.catalog().stream(file, [&](const index::BlockStream::Block& b) { return writer(b); });
  const int write_errno = writer.write_errno;
  const std::string& damage = writer.damage;
  const catalog::IndexStatus got = access.catalog().status(file);
  const bool stopped_early = write_errno || !damage.empty();
  if (!stopped_early)
    for (const std::string& n : got.origin.notes) std::fprintf(stderr, "mibz2 cat: %s: %s\n", path, n.c_str());
  if (write_errno) return write_failed(write_errno);
  if (!damage.empty()) {
    std::fprintf(stderr, "mibz2 cat: %s: %s (run 'mibz2 info %s' for all the damage)\n", path, damage.c_str(), path);
    return stopped(kExitDataError);
  }
  if (!got.ready()) {
    std::fprintf(stderr, "mibz2 cat: %s: %s\n", path, got.error.message().c_str());
    // A read error after part of the file went out ends cat there, as bzip2 -dc's would.
    return writer.wrote ? stopped(exit_status_of(got.error)) : no_index(got);
  }
  return check_tail(path, *got.index);
}

// Through the engine: the index (built if missing), the decoder pool and read-ahead, and the read
// handle's rule for failures (catalog/read_handle.h): a stored index that turns out not to match a
// file that has not changed is built again and the output goes on where it stopped; a file that
// changed while it was read ends cat there (never a mix of two contents).
Outcome cat_range(const char* path, catalog::ReadHandle& handle, uint64_t offset, uint64_t length) {
  constexpr size_t kChunk = 4 << 20;
  std::vector<uint8_t> buf(kChunk);
  const uint64_t size = handle.size();
  const uint64_t begin = std::min(offset, size);
  const uint64_t end = begin + std::min(length, size - begin);
  const bool reaches_end = length >= size - begin;
  for (offset = begin; offset < end;) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, end - offset));
    const catalog::ReadResult r = handle.read(offset, want, buf.data());
    if (!r.ok()) return read_failed(path, r.status(""));
    if (r.bytes == 0) break;
    if (const int werr = io::write_all(STDOUT_FILENO, buf.data(), r.bytes)) return write_failed(werr);
    offset += r.bytes;
  }
  return reaches_end ? check_tail(path, *handle.index()) : kWritten;
}

Outcome cat_engine(const char* path, IndexAccess& access, const catalog::FileRef& file, uint64_t offset,
                   uint64_t length) {
  const Opened opened = open_handle(path, access, file);
  if (!opened.handle) return opened.failed;
  return cat_range(path, *opened.handle, offset, length);
}

// --lines: the bytes of lines FIRST..LAST, as `sed -n 'FIRST,LASTp'` writes them. Where the range
// starts and ends comes from the index's newline counts and a read of the one block that holds each
// end (index/line_map.h); the bytes between are written as --offset/--length write theirs.
// Lines the index cannot number are said as such: with no line counts in the index (an older
// format) the file is skipped with status 1, as one that cannot be opened (nothing of it is
// written, the file is not to blame); after damage, status 2 and cat stops there, as at any damage,
// having written the lines of the range that lie before the damaged block.
Outcome cat_lines(const char* path, IndexAccess& access, const catalog::FileRef& file, const LineRange& lines) {
  const Opened opened = open_handle(path, access, file);
  if (!opened.handle) return opened.failed;
  catalog::ReadHandle& handle = *opened.handle;
  const catalog::ReadHandle::Lines numbered = handle.lines();
  const index::LineMap* map = numbered.map.get();
  if (map->gap() == index::LineMap::Gap::kNotCounted) {
    std::fprintf(stderr, "mibz2 cat: %s: %s\n", path, map->unknown_why().c_str());
    return skipped(kExitEnvironment);
  }
  const base::Result<uint64_t> begin = handle.line_offset(lines.first);
  // Line LAST + 1 starts where the range ends; with no LAST (or the last line number there is) it
  // runs to the end, and its tail is checked as a whole file's is.
  const bool to_end = !lines.last || *lines.last == UINT64_MAX;
  const base::Result<uint64_t> end = to_end ? base::Result<uint64_t>(UINT64_MAX) : handle.line_offset(*lines.last + 1);
  const base::Status failed = !begin.ok() ? begin.status() : !end.ok() ? end.status() : base::Status();
  if (failed.ok()) return cat_range(path, handle, *begin, to_end ? UINT64_MAX : *end - *begin);
  if (failed.code() == ENODATA) {
    // After damage. The lines of the range before the damaged block, if any, go out first.
    if (begin.ok())
      if (const Outcome r = cat_range(path, handle, *begin, map->known_end() - *begin); r.status != kExitOk) return r;
    std::fprintf(stderr, "mibz2 cat: %s: %s\n", path, failed.message().c_str());
    return stopped(kExitDataError);
  }
  return read_failed(path, failed);
}

// Standard input, or a FILE that is a stream (stream_input.h), as bzip2 -dc reads it: it cannot be
// seeked, so it has no index; it is decoded in one parallel pass all the same, read as far ahead as
// the decoders are and forgotten behind the writer, so memory is bounded whatever its length.
Outcome cat_stream(IndexAccess& access, int fd, const char* name) {
  BlockWriter writer;
  const StreamPass pass = pass_stream(access, fd, [&](const index::BlockStream::Block& b) { return writer(b); });
  const index::BuildResult& r = pass.result;
  const int write_errno = writer.write_errno;
  const std::string& damage = writer.damage;
  if (write_errno) return write_failed(write_errno);
  if (pass.read_error) {
    std::fprintf(stderr, "mibz2 cat: %s: reading: %s\n", name, std::strerror(pass.read_error));
    return stopped(kExitEnvironment);
  }
  if (!damage.empty()) {
    std::fprintf(stderr, "mibz2 cat: %s: %s\n", name, damage.c_str());
    return stopped(kExitDataError);
  }
  if (!r.ok()) {
    std::fprintf(stderr, "mibz2 cat: %s: %s\n", name, r.error.message().c_str());
    return stopped(kExitDataError);
  }
  for (const std::string& n : r.notes) std::fprintf(stderr, "mibz2 cat: %s: %s\n", name, n.c_str());
  return check_tail(name, r.index);
}

// A FILE that is a stream: opened (a fifo waits for its writer), then read as standard input is.
Outcome cat_named_stream(IndexAccess& access, const char* path) {
  const base::Result<io::UniqueFd> fd = open_stream(path);
  if (!fd.ok()) {
    std::fprintf(stderr, "mibz2 cat: %s: %s\n", path, fd.status().message().c_str());
    return skipped(kExitEnvironment);
  }
  return cat_stream(access, fd->get(), path);
}

bool is_stdin(const std::string& name) { return name == "-"; }

}  // namespace

int cmd_cat(const CatOptions& o) {
  // A whole file: with -j 1, one thread streaming through it as bzip2 -dc does (no index);
  // otherwise through the engine if its index is current, else one parallel pass that also
  // stores the index. A range, of bytes or of lines, always goes through the engine (index built
  // first if missing).
  // Standard input and FILEs that are streams (a fifo, /dev/stdin, <(command)) are read once, in
  // order, in parallel, with no index.
  const bool whole = !o.offset && !o.length && !o.lines;
  const bool streaming = o.threads == 1 && whole;
  // No FILE: standard input, as bzip2 -dc does.
  const std::vector<std::string> files = o.files.empty() ? std::vector<std::string>{"-"} : o.files;
  if (!whole) {
    for (const std::string& name : files) {
      const std::string kind = is_stdin(name) ? std::string("standard input") : stream_kind(name);
      if (kind.empty()) continue;
      std::fprintf(stderr, "mibz2 cat: %s need%s a file that can be seeked: %s is %s\n",
                   o.lines ? "--lines" : "--offset and --length", o.lines ? "s" : "", is_stdin(name) ? "-" : name.c_str(),
                   kind.c_str());
      return kExitEnvironment;
    }
  }
  bz2::BlockDecoder decoder;
  // One pass over the data needs the cache only to hold what is decoded ahead of the writer
  // (read-ahead takes up to a quarter of it): 16 MiB a thread that decodes at once (threads beyond
  // the CPUs wait their turn, engine/decoder_pool.h). A cache as large as the file would only make
  // every block fresh memory (a page fault per 4 KiB) where evicted blocks' memory is reused
  // (base/buffer_memory.h): -j 32 on 2 CPUs, sized by its 32 threads, ran at 0.79 of -j 2. Made at
  // the first file that needs it.
  std::unique_ptr<IndexAccess> access_made;
  auto access = [&]() -> IndexAccess& {
    if (!access_made) {
      const unsigned threads = engine::running_limit_for(o.threads);
      const uint64_t cache_size =
          std::min<uint64_t>(engine::default_cache_size(), (uint64_t{threads} + 1) * (16 << 20));
      access_made = std::make_unique<IndexAccess>(
          "mibz2 cat", catalog::FrontDoorOptions{.threads = o.threads,
                                                 .cache_size = cache_size,
                                                 .index_dir = o.index_dir,
                                                 .named_index = o.index});
    }
    return *access_made;
  };
  int status = kExitOk;
  for (const std::string& name : files) {
    const char* path = name.c_str();
    Outcome r;
    if (is_stdin(name)) {
      r = cat_stream(access(), STDIN_FILENO, "(stdin)");
    } else if (!stream_kind(name).empty()) {
      r = cat_named_stream(access(), path);
    } else if (streaming && !io::is_url(name)) {
      // (A URL is read through the engine whatever -j says: its bytes come by range requests.)
      r = cat_one(path, decoder);
    } else {
      const catalog::FileRef file = access().file(name);
      if (o.lines) r = cat_lines(path, access(), file, *o.lines);
      else if (whole && !access().catalog().load_if_current(file)) r = cat_streaming(path, access(), file);
      else r = cat_engine(path, access(), file, o.offset.value_or(0), o.length.value_or(UINT64_MAX));
    }
    status = std::max(status, r.status);
    if (!r.go_on) break;
  }
  return status;
}

}  // namespace mibz2::programs
