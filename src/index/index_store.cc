#include "index/index_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "index/index_dir.h"
#include "index/index_format.h"
#include "index/index_trust.h"
#include "index/xxh3.h"
#include "io/descriptor_limit.h"
#include "io/fd_io.h"
#include "io/source_bytes.h"
#include "io/unique_fd.h"

namespace mibz2::index {
namespace {

constexpr size_t kFingerprintSpan = 64 * 1024;
constexpr const char* kTempMark = ".tmp.";

std::string errno_text(int e) { return std::strerror(e); }

// mkdir -p for the cache directory (mode 0700: indexes reveal what a user reads).
base::Status make_dirs(const std::string& dir) {
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    partial = dir.substr(0, pos);
    if (partial.empty()) continue;
    if (mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) {
      const int e = errno;
      return base::Status::os_error(e, "cannot create " + partial + ": " + errno_text(e));
    }
  }
  return {};
}

// This host's name as it goes into temporary file names: no '/', at most 64 bytes.
std::string host_name() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "unknown";
  std::string h(buf);
  for (char& c : h)
    if (c == '/' || static_cast<unsigned char>(c) < 0x21) c = '_';
  if (h.size() > 64) h.resize(64);
  return h;
}

// Six characters for a temporary name, as mkstemp picks them (mkstemp itself takes a path, not a
// directory descriptor).
std::string random_suffix() {
  static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  uint8_t bytes[6] = {};
  if (getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
    const uint64_t t = static_cast<uint64_t>(time(nullptr)) ^ (static_cast<uint64_t>(getpid()) << 20) ^
                       reinterpret_cast<uintptr_t>(&bytes);
    for (size_t i = 0; i < sizeof bytes; ++i) bytes[i] = static_cast<uint8_t>(t >> (8 * i));
  }
  std::string s;
  for (uint8_t b : bytes) s += kChars[b % (sizeof kChars - 1)];
  return s;
}

// The writer a temporary name "<final>.tmp.HOST.PID.XXXXXX" names, if it is one.
bool parse_temporary(const std::string& name, std::string* host, long* pid) {
  const size_t mark = name.find(std::string(".idx") + kTempMark);
  if (mark == std::string::npos) return false;
  const std::string rest = name.substr(mark + 4 + std::strlen(kTempMark));  // HOST.PID.XXXXXX
  const size_t last = rest.rfind('.');
  if (last == std::string::npos || last == 0) return false;
  const size_t before = rest.rfind('.', last - 1);
  if (before == std::string::npos || before == 0) return false;
  const std::string digits = rest.substr(before + 1, last - before - 1);
  if (digits.empty() || digits.size() > 10 || digits.find_first_not_of("0123456789") != std::string::npos) return false;
  *host = rest.substr(0, before);
  *pid = std::strtol(digits.c_str(), nullptr, 10);
  return true;
}

}  // namespace

const char* to_string(Load load) {
  switch (load) {
    case Load::kCurrent: return "current";
    case Load::kSameContent: return "same content";
    case Load::kMissing: return "missing";
    case Load::kStale: return "stale";
    case Load::kInvalid: return "invalid";
    case Load::kUntrusted: return "untrusted";
  }
  return "?";
}

std::string default_index_dir() { return default_index_dir_of_process().dir; }

base::Result<uint64_t> fingerprint_of(const io::SourceBytes& source, uint64_t size) {
  // Two requests, whatever the file's size: cheap on remote storage too.
  const uint64_t whole = std::min<uint64_t>(size, 2 * kFingerprintSpan);
  std::vector<uint8_t> buf(static_cast<size_t>(whole));
  const size_t head = static_cast<size_t>(size <= 2 * kFingerprintSpan ? whole : kFingerprintSpan);
  const size_t tail = static_cast<size_t>(whole) - head;
  const io::SourceRead a = source.read(0, head, buf.data());
  const io::SourceRead b = tail && !a.failed() ? source.read(size - tail, tail, buf.data() + head) : io::SourceRead{};
  if (a.failed() || b.failed()) {
    const io::SourceRead& failed = a.failed() ? a : b;
    return base::Status::os_error(failed.error, failed.describe());
  }
  // A file that is being changed (truncated, rewritten): the machine's moment, not its content.
  MIBZ2_RETURN_ERROR_IF(a.count != head || b.count != tail, EIO, "the file is shorter than its size (changing?)");
  return xxh3(buf.data(), buf.size());
}

namespace {

// The identity of a source whose stamp is `stamp`, its bytes read through `bytes`.
base::Result<SourceIdentity> identified(const io::SourceStamp& stamp, const io::SourceBytes& bytes) {
  SourceIdentity id = SourceIdentity::from_stamp(stamp);
  // The fingerprint is half of the content identity (with the size): it names the index file, and
  // catches a file rewritten in place with its size and mtime restored (FORMAT.md: the first and
  // last 64 KiB, or the whole file when it is no larger than both).
  const base::Result<uint64_t> fingerprint = fingerprint_of(bytes, id.size);
  MIBZ2_FORWARD_IF_ERROR(fingerprint);
  id.fingerprint = *fingerprint;
  return id;
}

}  // namespace

base::Result<SourceIdentity> identify_source(int fd) {
  const base::Result<io::SourceStamp> stamp = io::stamp_of(fd);
  MIBZ2_FORWARD_IF_ERROR(stamp);
  return identified(*stamp, io::FdBytes(fd, stamp->size));
}

base::Result<SourceIdentity> identify_source(const io::Source& source) {
  const base::Result<io::SourceStamp> stamp = source.stamp_now();
  MIBZ2_FORWARD_IF_ERROR(stamp);
  return identified(*stamp, source);
}

uint64_t max_index_file_size(uint64_t source_size) {
  // FORMAT.md: records do not overlap; a block is at least 48 bits long, and a shorter damaged
  // stretch always ends at a block or an end-of-stream marker (at least 48 bits), so two records
  // take at least 49 bits; a truncated last one may be shorter still.
  return kHeaderSize + kBytesPerBlock * (source_size * 8 / 24 + 2);
}

namespace {

// What an index parsed from a file (parse or parse_mapped) is for the source `id`, or why it
// cannot be used. Its callers refused a file larger than any index of `id` before parsing it.
LoadedIndex judge_index(base::Result<BlockIndex> parsed, const std::string& name, const SourceIdentity& id) {
  LoadedIndex got;
  auto refused = [&](Load load, int code, std::string why) {
    got.load = load;
    got.why = base::Status::error(code, std::move(why));
    return std::move(got);
  };
  if (!parsed.ok()) return refused(Load::kInvalid, EBADMSG, name + ": " + parsed.status().message());
  BlockIndex& idx = *parsed;
  if (idx.source.size != id.size || idx.source.fingerprint != id.fingerprint)
    return refused(Load::kStale, ESTALE, name + ": an index of other content (its size or fingerprint is not the source's)");
  got.load = idx.source.same_stat(id) ? Load::kCurrent : Load::kSameContent;
  got.index = std::move(idx);
  return got;
}

}  // namespace

LoadedIndex read_index_file(int fd, const struct stat& dir, const std::string& name, const SourceIdentity& id) {
  LoadedIndex got;
  auto refused = [&](Load load, int code, std::string why) {
    got.load = load;
    got.why = base::Status::error(code, std::move(why));
    return std::move(got);
  };
  // An index file is input like any other (a shared directory, a sidecar published with a dump):
  // a regular file only, written by someone this process believes (no content check can catch a
  // crafted index), and never larger than an index of this source can be (so a huge or sparse
  // file is not read).
  struct stat st;
  const bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (!regular) return refused(Load::kInvalid, EINVAL, name + ": not a regular file");
  if (const Trust t = judge_index_file(st, dir, geteuid()); t != Trust::kTrusted)
    return refused(Load::kUntrusted, EPERM, name + " is not believed: " + explain(t, st, dir, geteuid()));
  if (static_cast<uint64_t>(st.st_size) > max_index_file_size(id.size))
    return refused(Load::kInvalid, EFBIG, name + ": larger than any index of this source can be");
  // Mapped, not read: every process that opens this index shares its pages (FORMAT.md, "One copy
  // a machine"). Read into memory only where it cannot be mapped (an empty file, the guard's
  // table full).
  base::Result<std::shared_ptr<const io::MappedFile>> mapped =
      st.st_size > 0 ? io::MappedFile::map(fd, static_cast<size_t>(st.st_size))
                     : base::Status::error(EINVAL, "empty");
  if (mapped.ok()) {
    got = judge_index(parse_mapped(*mapped), name, id);
  } else {
    std::vector<uint8_t> bytes(static_cast<size_t>(st.st_size));
    const ssize_t n = io::pread_full(fd, bytes.data(), bytes.size(), 0);
    if (n < 0 || static_cast<size_t>(n) != bytes.size())
      return refused(Load::kInvalid, n < 0 ? errno : EIO, "cannot read " + name);
    got = judge_index_bytes(bytes, name, id);
  }
  if (got.load == Load::kCurrent || got.load == Load::kSameContent)
    got.file = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
  return got;
}

LoadedIndex judge_index_bytes(std::span<const uint8_t> bytes, const std::string& name, const SourceIdentity& id) {
  if (bytes.size() > max_index_file_size(id.size)) {
    LoadedIndex got;
    got.load = Load::kInvalid;
    got.why = base::Status::error(EFBIG, name + ": larger than any index of this source can be");
    return got;
  }
  return judge_index(parse(bytes), name, id);
}


base::Status write_index_file_at(int dir_fd, const std::string& name, const std::string& shown,
                                 const BlockIndex& index, bool* at_rename, StoredFile* written) {
  if (at_rename) *at_rename = false;
  // Unique to this host and process (six random characters, created exclusively): writers on
  // several machines sharing the directory never share a temporary, and a stale one tells whose it
  // was (IndexStore::remove_stale_temporaries).
  const std::string stem = name + kTempMark + host_name() + "." + std::to_string(getpid()) + ".";
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = stem + random_suffix();
    fd = openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    const int e = io::note_open_errno(errno);
    return base::Status::os_error(e, "cannot create a file beside " + shown + ": " + errno_text(e));
  }
  const std::vector<uint8_t> bytes = serialize(index);
  int err = io::write_all(fd, bytes.data(), bytes.size());
  if (!err && fchmod(fd, 0644) != 0) err = errno;  // a published index is meant to be read by others
  if (!err && fsync(fd) != 0) err = errno;
  struct stat st;
  StoredFile made;
  if (!err && fstat(fd, &st) == 0) made = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
  if (close(fd) != 0 && !err) err = errno;
  // The rename is the publication: a reader opens the old file or the whole new one, never a part.
  if (!err && renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) != 0) {
    err = errno;
    if (at_rename) *at_rename = true;
  }
  if (err) {
    unlinkat(dir_fd, tmp.c_str(), 0);
    return base::Status::os_error(err, "cannot write " + shown + ": " + errno_text(err));
  }
  fsync(dir_fd);  // makes the rename itself durable
  if (written) *written = made;
  return {};
}

base::Status write_index_file(const std::string& path, const BlockIndex& index) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) {
    const int e = errno;
    return base::Status::os_error(e, "cannot write " + path + ": " + errno_text(e));
  }
  base::Status written = write_index_file_at(dfd, name, path, index);
  close(dfd);
  return written;
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
  if (dir_.empty()) return;
  const base::Result<int> fd = open_dir(/*create=*/false);
  if (!fd.ok()) {
    problem_ = fd.status().message();
    dir_.clear();
    return;
  }
  dir_fd_ = *fd;
}

IndexStore::~IndexStore() {
  if (const int fd = dir_fd_.load(); fd >= 0) close(fd);
}

base::Result<int> IndexStore::open_dir(bool create) const {
  if (create) MIBZ2_FORWARD_IF_ERROR(make_dirs(dir_));
  // The last component is not followed: the directory named is the one used, and a symlink put
  // there later is never seen (the descriptor is held).
  io::UniqueFd fd(open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    const int e = errno;
    if (e == ENOENT && !create) return -1;
    struct stat st;
    MIBZ2_RETURN_ERROR_IF(lstat(dir_.c_str(), &st) == 0 && S_ISLNK(st.st_mode), ELOOP,
                          dir_ + " is a symlink, refused as index directory (name the directory it points to)");
    MIBZ2_RETURN_ERROR_IF(e == ENOTDIR, ENOTDIR, dir_ + " is not a directory");
    return base::Status::os_error(e, "cannot open the index directory " + dir_ + ": " + errno_text(e));
  }
  struct stat st;
  if (fstat(fd.get(), &st) != 0) {
    const int e = errno;
    return base::Status::os_error(e, "cannot stat the index directory " + dir_ + ": " + errno_text(e));
  }
  const Trust t = judge_index_dir(st, geteuid());
  MIBZ2_RETURN_ERROR_IF(t != Trust::kTrusted, EPERM,
                        dir_ + " is refused as index directory (no index in it would be believed): it is " +
                            explain_dir(t, st, geteuid()));
  return fd.release();
}

std::string IndexStore::name_for(const SourceIdentity& id) {
  char name[64];
  std::snprintf(name, sizeof name, "%016llx-%llu.idx", static_cast<unsigned long long>(id.fingerprint),
                static_cast<unsigned long long>(id.size));
  return name;
}

std::string IndexStore::path_for(const SourceIdentity& id) const { return dir_ + "/" + name_for(id); }

base::Result<int> IndexStore::held_dir(bool create) const {
  if (const int fd = dir_fd_.load(); fd >= 0 || dir_.empty()) return fd;
  // Missing at construction: opened once it exists (made by the first save, or by another mount
  // sharing it), and held from then on; of two threads opening it at once, one keeps its own.
  const base::Result<int> opened = open_dir(create);
  MIBZ2_FORWARD_IF_ERROR(opened);
  const int fd = *opened;
  if (fd < 0) return -1;
  int none = -1;
  if (dir_fd_.compare_exchange_strong(none, fd)) return fd;
  close(fd);
  return none;
}

LoadedIndex IndexStore::load(const SourceIdentity& id) const {
  LoadedIndex got;
  // A directory made unusable since construction: save() says so, once.
  const base::Result<int> held = held_dir(/*create=*/false);
  if (!held.ok() || *held < 0) return got;
  const int dfd = *held;
  const std::string path = path_for(id);
  // Never through a symlink, never blocking on a fifo.
  const int fd = openat(dfd, name_for(id).c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return got;
    const int e = io::note_open_errno(errno);
    got.load = Load::kInvalid;
    got.why = base::Status::error(e, "cannot open " + path + ": " + errno_text(e));
    return got;
  }
  struct stat dir;
  if (fstat(dfd, &dir) != 0) {
    const int e = errno;
    got.load = Load::kInvalid;
    got.why = base::Status::error(e, "cannot stat " + dir_ + ": " + errno_text(e));
  } else {
    got = read_index_file(fd, dir, path, id);
  }
  close(fd);
  return got;
}

bool IndexStore::read_only() const {
  std::lock_guard lk(mu_);
  return read_only_;
}

size_t IndexStore::remove_stale_temporaries() const {
  const int dfd = dir_fd_.load();
  if (dfd < 0) return 0;
  // A description of its own for the listing (a dup would share the held descriptor's position).
  const int lfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* d = lfd >= 0 ? fdopendir(lfd) : nullptr;
  if (!d) {
    if (lfd >= 0) close(lfd);
    return 0;
  }
  const std::string me = host_name();
  const time_t now = time(nullptr);
  size_t removed = 0;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    std::string host;
    long pid = 0;
    if (!parse_temporary(name, &host, &pid)) continue;
    struct stat st;
    if (fstatat(dfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    const time_t age = now - st.st_mtime;
    // Another host's writer (or one of this host in another pid namespace) may still be writing a
    // fresh one; a writer of this host that no longer exists is not.
    const bool dead_writer = host == me && pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
    if (age > kStaleTemporaryAge.count() || (dead_writer && age > kDeadWriterGrace.count())) {
      if (unlinkat(dfd, name.c_str(), 0) == 0) ++removed;
    }
  }
  closedir(d);
  return removed;
}

base::Status IndexStore::save(const BlockIndex& index, StoredFile* written) {
  bool clean = false;
  {
    std::lock_guard lk(mu_);
    MIBZ2_RETURN_ERROR_IF(read_only_, EROFS, "index directory is not writable");
    const auto now = std::chrono::steady_clock::now();
    if (!cleaned_ || now - last_cleaned_ > kStaleTemporaryAge) {
      cleaned_ = true;
      last_cleaned_ = now;
      clean = true;
    }
  }
  // Only a directory that cannot be used at all makes the store read-only; one file that cannot be
  // written (a full disk; in a sticky directory, another user's file at its name) does not stop the
  // others from being saved.
  auto fail = [&](base::Status why) {
    std::lock_guard lk(mu_);
    read_only_ = true;
    return why;
  };
  if (dir_.empty()) return fail(base::Status::error(ENOENT, problem_.empty() ? "no index directory" : problem_));
  const base::Result<int> held = held_dir(/*create=*/true);
  if (!held.ok()) return fail(held.status());
  const int dfd = *held;  // (made if missing: never -1)
  if (clean) remove_stale_temporaries();
  bool at_rename = false;
  base::Status status =
      write_index_file_at(dfd, name_for(index.source), path_for(index.source), index, &at_rename, written);
  const int e = status.code();
  if (!at_rename && (e == EACCES || e == EPERM || e == EROFS || e == ENOTDIR || e == ENOENT)) return fail(status);
  return status;
}

bool IndexStore::remove_superseded(const SourceIdentity& was, const StoredFile& file) const {
  const int dfd = dir_fd_.load();
  if (dfd < 0 || !file.known()) return false;
  const std::string name = name_for(was);
  // The very file written or read (another mount sharing the directory may have put its own
  // there since, which is not this one's to judge), and this user's: root's file in a directory
  // root lets this user write is trusted, not this user's to remove.
  struct stat st;
  if (fstatat(dfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) return false;
  if (static_cast<uint64_t>(st.st_dev) != file.device || static_cast<uint64_t>(st.st_ino) != file.inode ||
      st.st_uid != geteuid())
    return false;
  return unlinkat(dfd, name.c_str(), 0) == 0;
}

}  // namespace mibz2::index
