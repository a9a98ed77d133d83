#include "index/index_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "index/index_dir.h"
#include "index/xxh3.h"
#include "index/index_format.h"
#include "io/fd_io.h"

namespace mibz2::index {
namespace {

constexpr size_t kFingerprintSpan = 64 * 1024;
// Bytes of the source's basename kept in an index file's name: with ".<16 hex>.idx.tmp.XXXXXX"
// (32 bytes) it stays well inside NAME_MAX (255).
constexpr size_t kMaxBaseName = 200;

std::string errno_text(int e) { return std::strerror(e); }

// mkdir -p for the cache directory (mode 0700: indexes reveal what a user reads).
bool make_dirs(const std::string& dir, std::string* error) {
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    partial = dir.substr(0, pos);
    if (partial.empty()) continue;
    if (mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) {
      *error = "cannot create " + partial + ": " + errno_text(errno);
      return false;
    }
  }
  return true;
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string default_index_dir() { return default_index_dir_of_process().dir; }

bool identify_source(int fd, SourceIdentity* id, std::string* error) {
  struct stat st;
  if (fstat(fd, &st) != 0) {
    *error = errno_text(errno);
    return false;
  }
  *id = SourceIdentity::from_stat(st);
  // The fingerprint catches a file rewritten in place with its size and mtime restored
  // (FORMAT.md: the first and last 64 KiB, or the whole file when it is no larger than both).
  const uint64_t whole = std::min<uint64_t>(id->size, 2 * kFingerprintSpan);
  std::vector<uint8_t> buf(static_cast<size_t>(whole));
  const size_t head = static_cast<size_t>(id->size <= 2 * kFingerprintSpan ? whole : kFingerprintSpan);
  const size_t tail = static_cast<size_t>(whole) - head;
  const ssize_t a = io::pread_full(fd, buf.data(), head, 0);
  const ssize_t b = tail ? io::pread_full(fd, buf.data() + head, tail, id->size - tail) : 0;
  if (a < 0 || b < 0) {
    *error = errno_text(static_cast<int>(-(a < 0 ? a : b)));
    return false;
  }
  if (static_cast<size_t>(a) != head || static_cast<size_t>(b) != tail) {
    *error = "the file is shorter than its size (changing?)";
    return false;
  }
  id->fingerprint = xxh3(buf.data(), buf.size());
  return true;
}

uint64_t max_index_file_size(uint64_t source_size) {
  // FORMAT.md: records do not overlap and all but a truncated last one are at least 48 bits long.
  return kHeaderSize + sizeof(BlockRecord) * (source_size * 8 / 48 + 2);
}

IndexStore::IndexStore(std::string dir) {
  if (dir.empty()) {
    const DefaultIndexDir chosen = default_index_dir_of_process();
    if (chosen.dir.empty()) problem_ = "no index directory (neither XDG_CACHE_HOME nor HOME is set)";
    else if (chosen.system) problem_ = ensure_private_dir(chosen.dir, geteuid());
    if (problem_.empty()) dir = chosen.dir;
  }
  dir_ = std::move(dir);
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
}

std::string IndexStore::path_for(const std::string& source_abs_path) const {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(xxh3(source_abs_path.data(), source_abs_path.size())));
  // The basename is for people reading the directory; the hash makes the name unique. Cut, so
  // that the name and its temporary form (".tmp.XXXXXX") fit NAME_MAX whatever the source's name.
  std::string base = base_name(source_abs_path);
  if (base.size() > kMaxBaseName) {
    size_t cut = kMaxBaseName;
    while (cut > 0 && (static_cast<unsigned char>(base[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
    base.resize(cut);
  }
  return dir_ + "/" + base + "." + hex + ".idx";
}

IndexStore::Load IndexStore::load(const std::string& source_abs_path, const SourceIdentity& id, BlockIndex* out,
                                  std::string* reason) const {
  if (dir_.empty()) return Load::kMissing;
  const std::string path = path_for(source_abs_path);
  // An index directory may be shared: its files are input like any other. Never through a
  // symlink, never blocking on a fifo, a regular file only, and never larger than an index of this
  // source can be (so a huge or sparse file is not read).
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Load::kMissing;
    *reason = "cannot open " + path + ": " + errno_text(errno);
    return Load::kInvalid;
  }
  struct stat st;
  std::vector<uint8_t> bytes;
  ssize_t n = -EIO;
  const bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  const bool plausible = regular && static_cast<uint64_t>(st.st_size) <= max_index_file_size(id.size);
  if (plausible) {
    bytes.resize(static_cast<size_t>(st.st_size));
    n = io::pread_full(fd, bytes.data(), bytes.size(), 0);
  }
  close(fd);
  if (!plausible) {
    *reason = path + (regular ? ": larger than any index of this source can be" : ": not a regular file");
    return Load::kInvalid;
  }
  if (n < 0 || static_cast<size_t>(n) != bytes.size()) {
    *reason = "cannot read " + path;
    return Load::kInvalid;
  }
  BlockIndex idx;
  std::string why;
  if (!parse(bytes, &idx, &why)) {
    *reason = path + ": " + why;
    return Load::kInvalid;
  }
  if (!idx.source.same_stat(id)) {
    *reason = "the source file changed since it was indexed (size, mtime or inode differ)";
    return Load::kStale;
  }
  if (idx.source.fingerprint != id.fingerprint) {
    *reason = "the source file's content changed since it was indexed (fingerprint differs)";
    return Load::kStale;
  }
  *out = std::move(idx);
  return Load::kCurrent;
}

bool IndexStore::read_only() const {
  std::lock_guard lk(mu_);
  return read_only_;
}

bool IndexStore::save(const std::string& source_abs_path, const BlockIndex& index, std::string* error) {
  {
    std::lock_guard lk(mu_);
    if (read_only_) {
      *error = "index directory is not writable";
      return false;
    }
  }
  // Only a directory that cannot be used at all makes the store read-only; one file that cannot be
  // written (a name, a full disk) does not stop the others from being saved.
  auto fail = [&](std::string why) {
    std::lock_guard lk(mu_);
    read_only_ = true;
    *error = std::move(why);
    return false;
  };
  if (dir_.empty()) return fail(problem_);
  if (!make_dirs(dir_, error)) return fail(*error);

  const std::string path = path_for(source_abs_path);
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) {
    const int e = errno;
    const std::string why = "cannot write in " + dir_ + ": " + errno_text(e);
    if (e == EACCES || e == EPERM || e == EROFS || e == ENOTDIR || e == ENOENT) return fail(why);
    *error = why;
    return false;
  }
  const std::vector<uint8_t> bytes = serialize(index);
  int err = io::write_all(fd, bytes.data(), bytes.size());
  if (!err && fsync(fd) != 0) err = errno;
  if (close(fd) != 0 && !err) err = errno;
  if (!err && rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err) {
    unlink(tmp.c_str());
    *error = "cannot write " + path + ": " + errno_text(err);
    return false;  // a single failed write (disk full) does not make the store read-only
  }
  // Make the rename itself durable.
  if (const int dfd = open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return true;
}

}  // namespace mibz2::index
