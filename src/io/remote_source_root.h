// SOURCE as a remote tree, for a mount of a URL (source_root.h says what a mount asks of SOURCE):
//   - one object (http(s)://HOST/PATH/NAME, s3://BUCKET/KEY): a directory holding that object
//     under its name (NAME, the last component of its path or key);
//   - the objects under an S3 prefix (s3://BUCKET/PREFIX/, or s3://BUCKET/): a tree, the keys'
//     '/'-separated components its directories, listed with ListObjectsV2 (s3_listing.h).
//
// Nothing here is ever held for long, since nobody tells the mount that an object changed:
//   - an object's attributes come from its stat (HEAD, or a GET of a byte), asked again when the
//     last answer is older than a second: each open and each stat the kernel sends (it keeps them
//     for the mount's few seconds of attribute timeout) sees the object as it is now;
//   - a prefix's listing is asked again when the last is older than `fresh` (5 s by default); a
//     directory's mtime is when its listing was taken, so the mount builds its own listing again
//     from each new one.
// An object's attributes are a read-only file's, owned by the mounting user, and its identity
// is the stamp a RemoteSource opened on it has (remote_source.h: device 0, inode the hash of its
// name and ETag, size, Last-Modified), so that a node stands for exactly the content the catalog
// opens. A key whose components are empty, "." or ".." (a//b, a/../b) is not shown: it has no
// path beneath SOURCE.
#pragma once

#include <sys/stat.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "io/http_client.h"
#include "io/s3_settings.h"
#include "io/source_root.h"
#include "io/source_url.h"

namespace mibz2::io {

class RemoteSourceRoot final : public SourceRoot {
 public:
  // SOURCE named by `url`, its objects stat'ed (and listed) with `s3`'s settings over the
  // environment's. Fails as the URL does not parse, names no object or prefix, or its first look
  // (the object's stat, or the prefix's listing) fails: the mount then does not start.
  static base::Result<std::unique_ptr<RemoteSourceRoot>> open(const std::string& url, const S3Options& s3 = {},
                                                              std::chrono::milliseconds fresh = std::chrono::seconds(5));

  const std::string& path() const override { return shown_; }
  std::string absolute(const std::string& rel) const override;
  std::optional<std::string> relative(const std::string& abs) const override;
  int open(const std::string&, Kind, struct stat*) const override { return -EOPNOTSUPP; }
  int open_in_dir(const std::string&, struct stat*, struct stat*) const override { return -EOPNOTSUPP; }
  int lstat(const std::string& rel, struct stat* st) const override;
  int list(const std::string& rel, std::vector<Entry>* out) const override;
  int readlink(const std::string&, std::string*) const override { return EINVAL; }
  int statvfs(struct statvfs* out) const override;
  bool watchable() const override { return false; }

  // Requests made so far (for tests).
  HttpStats stats() const { return http_->stats(); }

 private:
  // What one object listed is, for its stat.
  struct Listed {
    std::string key;
    ObjectInfo info;  // as listed: size, ETag, Last-Modified in HTTP's form
  };
  // The tree of one listing: every directory's entries (by name), files with their key.
  struct Tree {
    std::map<std::string, std::map<std::string, std::optional<Listed>>> dirs;  // nullopt: a subdirectory
    std::chrono::steady_clock::time_point taken;
    struct timespec taken_real{};
  };
  // A stat's answer, and when it was asked.
  struct Looked {
    base::Result<ObjectInfo> info;
    std::chrono::steady_clock::time_point at;
  };

  RemoteSourceRoot(SourceUrl url, S3Settings s3, std::chrono::milliseconds fresh);
  // The tree now: the one held, or a new listing when it is older than fresh_ (one at a time).
  base::Result<std::shared_ptr<const Tree>> tree() const;
  base::Result<std::shared_ptr<const Tree>> list_now() const;
  // The object with this key (s3) or this URL's (http): stat'ed, or the answer of the last second.
  base::Result<ObjectInfo> look(const std::string& key) const;
  // The stamp of the object `key`, as a RemoteSource opened on it has it, as a stat.
  struct stat file_stat(const std::string& key, const ObjectInfo& info) const;
  // A directory's attributes, its times those of the listing it is in.
  struct stat dir_stat(const std::string& rel, const struct timespec& listed) const;
  RemoteObject object(const std::string& key) const;

  const SourceUrl url_;
  const S3Settings s3_;
  const std::chrono::milliseconds fresh_;
  const bool prefix_;      // an S3 prefix, or one object
  std::string shown_;      // SOURCE in messages: the URL redacted (an object's: its "directory")
  std::string name_;       // one object: its name in the tree
  std::shared_ptr<HttpClient> http_;
  struct timespec opened_{};  // one object: its directory's times

  mutable std::mutex list_mu_;  // held while a listing is taken: one at a time
  mutable std::mutex mu_;       // a leaf lock: guards tree_ and looked_, never held over a request
  mutable std::shared_ptr<const Tree> tree_;
  mutable std::map<std::string, Looked> looked_;  // by key (one object: "")
};

}  // namespace mibz2::io
