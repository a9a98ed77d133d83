#include "io/remote_source_root.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include <spdlog/spdlog.h>

#include "io/remote_object.h"
#include "io/remote_source.h"
#include "io/s3_listing.h"

namespace mibz2::io {
namespace {

// How long an object's stat is believed: the lookup, stat and open of one command come within it.
constexpr auto kLookedFresh = std::chrono::seconds(1);

// S3 lists "2026-12-03T14:35:41.000Z" where a HEAD says "Thu, 03 Dec 2026 14:35:41 GMT": the
// second form for both, so that a listed object and the same object stat'ed have one stamp.
std::string http_date(const std::string& iso) {
  struct tm tm{};
  const char* end = strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!end) return {};
  const time_t t = timegm(&tm);
  struct tm gmt{};
  gmtime_r(&t, &gmt);
  char buf[64];
  return strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &gmt) ? std::string(buf) : std::string();
}

// Whether `rel` is a path beneath SOURCE: no empty, "." or ".." component.
bool clean_components(const std::string& rel, std::vector<std::string>* parts) {
  size_t start = 0;
  for (;;) {
    const size_t slash = rel.find('/', start);
    const std::string c = rel.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (c.empty() || c == "." || c == "..") return false;
    parts->push_back(c);
    if (slash == std::string::npos) return true;
    start = slash + 1;
  }
}

void split(const std::string& rel, std::string* dir, std::string* name) {
  const size_t slash = rel.rfind('/');
  *dir = slash == std::string::npos ? std::string() : rel.substr(0, slash);
  *name = slash == std::string::npos ? rel : rel.substr(slash + 1);
}

}  // namespace

base::Result<std::unique_ptr<RemoteSourceRoot>> RemoteSourceRoot::open(const std::string& url, const S3Options& s3,
                                                                       std::chrono::milliseconds fresh) {
  base::Result<SourceUrl> parsed = parse_source_url(url);
  MIBZ2_FORWARD_IF_ERROR(parsed);
  S3Settings settings;
  if (parsed->is_s3()) {
    base::Result<S3Settings> resolved = resolve_s3_settings(s3);
    MIBZ2_FORWARD_IF_ERROR(resolved);
    settings = std::move(*resolved);
  }
  std::unique_ptr<RemoteSourceRoot> root(new RemoteSourceRoot(std::move(*parsed), std::move(settings), fresh));
  if (!root->prefix_) {
    MIBZ2_RETURN_ERROR_IF(root->name_.empty(), EINVAL, root->shown_ + ": names no object to show (its path ends in '/')");
    base::Result<ObjectInfo> first = root->look("");
    MIBZ2_FORWARD_IF_ERROR(first);
  } else {
    base::Result<std::shared_ptr<const Tree>> first = root->tree();
    MIBZ2_FORWARD_IF_ERROR(first);
  }
  return root;
}

RemoteSourceRoot::RemoteSourceRoot(SourceUrl url, S3Settings s3, std::chrono::milliseconds fresh)
    : url_(std::move(url)), s3_(std::move(s3)), fresh_(fresh), prefix_(url_.is_prefix()),
      http_(std::make_shared<HttpClient>()) {
  clock_gettime(CLOCK_REALTIME, &opened_);
  if (prefix_) {
    // s3://BUCKET/PREFIX without its last '/', as a directory's path is shown.
    shown_ = "s3://" + url_.bucket;
    if (!url_.key.empty()) shown_.append("/").append(url_.key, 0, url_.key.size() - 1);
  } else {
    shown_ = redacted_url(url_.url);
    name_ = object_name(url_);
  }
}

std::string RemoteSourceRoot::absolute(const std::string& rel) const {
  if (rel.empty()) return shown_;
  if (prefix_) return "s3://" + url_.bucket + "/" + url_.key + rel;
  return rel == name_ ? url_.url : shown_ + "/" + rel;  // the object's URL as given: it is what is requested
}

std::optional<std::string> RemoteSourceRoot::relative(const std::string& abs) const {
  if (abs == shown_) return std::string();
  if (!prefix_) return abs == url_.url ? std::optional<std::string>(name_) : std::nullopt;
  const std::string under = "s3://" + url_.bucket + "/" + url_.key;
  if (abs.size() <= under.size() || abs.compare(0, under.size(), under) != 0) return std::nullopt;
  return abs.substr(under.size());
}

RemoteObject RemoteSourceRoot::object(const std::string& key) const {
  if (!prefix_) {
    base::Result<RemoteObject> o = remote_object(url_, url_.is_s3() ? &s3_ : nullptr);
    return o.ok() ? std::move(*o) : RemoteObject{};
  }
  return s3_request(s3_, s3_object_url(s3_, url_.bucket, key), "s3://" + url_.bucket + "/" + key);
}

base::Result<ObjectInfo> RemoteSourceRoot::look(const std::string& key) const {
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lk(mu_);
    auto it = looked_.find(key);
    if (it != looked_.end() && now - it->second.at < kLookedFresh) return it->second.info;
  }
  base::Result<ObjectInfo> info = http_->stat(object(key));
  std::lock_guard lk(mu_);
  // Only the last second's answers are kept: a tree of many objects does not keep one per object.
  for (auto it = looked_.begin(); it != looked_.end();) it = now - it->second.at < kLookedFresh ? std::next(it) : looked_.erase(it);
  looked_.insert_or_assign(key, Looked{info, now});
  return info;
}

base::Result<std::shared_ptr<const RemoteSourceRoot::Tree>> RemoteSourceRoot::tree() const {
  {
    std::lock_guard lk(mu_);
    if (tree_ && std::chrono::steady_clock::now() - tree_->taken < fresh_) return tree_;
  }
  std::lock_guard one(list_mu_);
  {
    std::lock_guard lk(mu_);  // another thread may have listed while this one waited
    if (tree_ && std::chrono::steady_clock::now() - tree_->taken < fresh_) return tree_;
  }
  base::Result<std::shared_ptr<const Tree>> listed = list_now();
  std::lock_guard lk(mu_);
  if (listed.ok()) {
    tree_ = *listed;
  } else if (tree_) {
    // The last listing stays for another while: a server that is down is not asked at every stat.
    spdlog::warn("{}: cannot list it again, its last listing is shown: {}", shown_, listed.status().message());
    auto kept = std::make_shared<Tree>(*tree_);
    kept->taken = std::chrono::steady_clock::now();
    tree_ = std::move(kept);
  } else {
    return listed.status();
  }
  return tree_;
}

base::Result<std::shared_ptr<const RemoteSourceRoot::Tree>> RemoteSourceRoot::list_now() const {
  base::Result<S3Listing> listing = list_s3_objects(*http_, s3_, url_.bucket, url_.key);
  MIBZ2_FORWARD_IF_ERROR(listing);
  auto tree = std::make_shared<Tree>();
  tree->taken = std::chrono::steady_clock::now();
  clock_gettime(CLOCK_REALTIME, &tree->taken_real);
  tree->dirs[""];
  for (ListedObject& o : listing->objects) {
    std::string rel = o.key.substr(url_.key.size());
    const bool marker = !rel.empty() && rel.back() == '/';  // a "folder" some tools make: a directory only
    if (marker) rel.pop_back();
    std::vector<std::string> parts;
    if (rel.empty() || !clean_components(rel, &parts)) continue;
    std::string dir;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      tree->dirs[dir].try_emplace(parts[i]);
      dir = dir.empty() ? parts[i] : dir + "/" + parts[i];
    }
    auto& entries = tree->dirs[dir];
    if (marker) {
      entries.try_emplace(parts.back());
      tree->dirs[rel];
      continue;
    }
    // A key that is also a directory's name (a, and a/b) is shown as the directory.
    if (tree->dirs.count(rel) || (entries.count(parts.back()) && !entries[parts.back()])) continue;
    entries[parts.back()] = Listed{std::move(o.key), ObjectInfo{o.size, std::move(o.etag), http_date(o.last_modified)}};
  }
  // A directory that came after a key of its name takes its place.
  for (auto& [dir, entries] : tree->dirs) {
    for (auto& [name, e] : entries)
      if (e && tree->dirs.count(dir.empty() ? name : dir + "/" + name)) e.reset();
  }
  return std::shared_ptr<const Tree>(std::move(tree));
}

struct stat RemoteSourceRoot::file_stat(const std::string& key, const ObjectInfo& info) const {
  const SourceStamp stamp = remote_stamp(object(key).shown, info);
  struct stat st{};
  st.st_dev = static_cast<dev_t>(stamp.device);
  st.st_ino = static_cast<ino_t>(stamp.inode);
  st.st_mode = S_IFREG | 0444;
  st.st_nlink = 1;
  st.st_uid = getuid();
  st.st_gid = getgid();
  st.st_size = static_cast<off_t>(stamp.size);
  st.st_blksize = 128 * 1024;
  st.st_blocks = static_cast<blkcnt_t>((stamp.size + 511) / 512);
  st.st_mtim.tv_sec = static_cast<time_t>(stamp.mtime_ns / 1'000'000'000ull);
  st.st_atim = st.st_mtim;
  return st;  // ctime 0, as the stamp's: an object has no change time apart from its content
}

struct stat RemoteSourceRoot::dir_stat(const std::string& rel, const struct timespec& listed) const {
  const std::string name = absolute(rel);
  struct stat st{};
  st.st_ino = static_cast<ino_t>(XXH3_64bits(name.data(), name.size()));
  st.st_mode = S_IFDIR | 0555;
  st.st_nlink = 2;
  st.st_uid = getuid();
  st.st_gid = getgid();
  st.st_blksize = 4096;
  // Its times are the listing's: a new listing is a directory that may have changed.
  st.st_mtim = st.st_ctim = st.st_atim = listed;
  return st;
}

int RemoteSourceRoot::lstat(const std::string& rel, struct stat* st) const {
  if (!prefix_) {
    if (rel.empty()) {
      *st = dir_stat(rel, opened_);
      return 0;
    }
    if (rel != name_) return ENOENT;
    base::Result<ObjectInfo> info = look("");
    if (!info.ok()) return info.status().code();
    *st = file_stat("", *info);
    return 0;
  }
  base::Result<std::shared_ptr<const Tree>> t = tree();
  if (!t.ok()) return t.status().code();
  const Tree& tree = **t;
  if (tree.dirs.count(rel)) {
    *st = dir_stat(rel, tree.taken_real);
    return 0;
  }
  std::string dir, name;
  split(rel, &dir, &name);
  const auto d = tree.dirs.find(dir);
  if (d == tree.dirs.end()) return ENOENT;
  const auto e = d->second.find(name);
  if (e == d->second.end() || !e->second) return ENOENT;
  // Listed: the object's stat now (a listing is up to `fresh` old; an open must see the object as
  // it is, not as it was listed).
  base::Result<ObjectInfo> info = look(e->second->key);
  if (!info.ok()) return info.status().code();
  *st = file_stat(e->second->key, *info);
  return 0;
}

int RemoteSourceRoot::list(const std::string& rel, std::vector<Entry>* out) const {
  if (!prefix_) {
    if (!rel.empty()) return rel == name_ ? ENOTDIR : ENOENT;
    base::Result<ObjectInfo> info = look("");
    if (info.ok()) out->push_back(Entry{name_, file_stat("", *info), true});
    else if (info.status().code() != ENOENT) return info.status().code();
    return 0;
  }
  base::Result<std::shared_ptr<const Tree>> t = tree();
  if (!t.ok()) return t.status().code();
  const Tree& tree = **t;
  const auto d = tree.dirs.find(rel);
  if (d == tree.dirs.end()) {
    struct stat st;
    return lstat(rel, &st) == 0 ? ENOTDIR : ENOENT;
  }
  for (const auto& [name, e] : d->second) {
    if (e) out->push_back(Entry{name, file_stat(e->key, e->info), true});
    else out->push_back(Entry{name, dir_stat(rel.empty() ? name : rel + "/" + name, tree.taken_real), std::nullopt});
  }
  return 0;
}

int RemoteSourceRoot::statvfs(struct statvfs* out) const {
  std::memset(out, 0, sizeof *out);
  out->f_bsize = out->f_frsize = 4096;
  out->f_namemax = 255;
  out->f_flag = ST_RDONLY;
  return 0;
}

}  // namespace mibz2::io
