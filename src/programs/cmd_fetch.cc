// mibz2 fetch URL FILE: downloads a remote object with several range requests in flight and builds
// its block index from the bytes as they arrive (one pass, not a download and then an index), so
// that FILE is indexed the moment it appears.
//
// How the parts fit: the object is read by RemoteBytes (connections requests side by side, each
// conditional on the ETag the download began with) and copied in order into a PendingFile beside
// FILE by a thread of its own (io::DownloadBytes); the index is built by a one-pass stream over
// that copy, each read of it waiting for the copy to pass its bytes. At the end the file is
// fsync'ed, its identity taken (size, mtime, inode, fingerprint: what it will have under FILE, as
// a rename keeps them), the index stored under it, and only then the file renamed to FILE: a mount
// of FILE's directory finds it indexed when it appears. A failure on the way (after the client's
// retries), an object that changed, or content that is not bzip2 leaves neither FILE nor index.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "base/words.h"
#include "index/index_store.h"
#include "io/download_bytes.h"
#include "io/http_client.h"
#include "io/remote_bytes.h"
#include "io/source_url.h"
#include "programs/cli_common.h"
#include "programs/commands.h"
#include "programs/index_access.h"
#include "programs/pending_file.h"
#include "programs/progress_line.h"

namespace mibz2::programs {
namespace {

// How the object is read: `connections` requests in flight, each a part of the object small
// enough that a small object is still shared among them (at least two requests a connection),
// large enough that a request's round trip is little against its transfer.
io::RemoteBytesOptions fetch_reading(uint64_t size, unsigned connections) {
  constexpr uint64_t kMin = 64 << 10, kMax = 4 << 20;
  const uint64_t share = size / (2 * uint64_t{connections});
  const uint64_t request = std::clamp<uint64_t>((share + kMin - 1) / kMin * kMin, kMin, kMax);
  io::RemoteBytesOptions o;
  o.request_bytes = request;
  o.readahead_requests = connections;
  o.readahead_bytes = request * connections;
  o.in_order = true;  // all of it in flight from the first read, not after a few single requests
  o.cache_bytes = 3 * o.readahead_bytes;
  return o;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class Fetch {
 public:
  explicit Fetch(const FetchOptions& o) : o_(o), shown_(io::redacted_url(o.url)) {}
  int run();

 private:
  int fail(const std::string& what, int status = kExitEnvironment) const {
    std::fprintf(stderr, "mibz2 fetch: %s\n", base::one_line(what).c_str());
    return status;
  }
  // Why the download stopped, in words that name the object (never a credential).
  std::string download_failure(const io::RemoteBytes& remote, const base::Status& copied) const;
  // `secs` in all, `download_secs` until the last byte was written.
  void summary(const index::BlockIndex& idx, const std::string& index_path, double secs, double download_secs) const;

  const FetchOptions& o_;
  const std::string shown_;
};

std::string Fetch::download_failure(const io::RemoteBytes& remote, const base::Status& copied) const {
  if (remote.changed())
    return remote.object().shown +
           ": the object changed during the download (it is no longer the version the download began with): "
           "nothing kept, fetch it again";
  const base::Status why = remote.last_failure();
  if (!why.ok()) return why.message();
  return remote.object().shown + ": " + copied.message();
}

int Fetch::run() {
  if (!io::is_url(o_.url)) return fail(shown_ + ": not an http://, https:// or s3:// URL");
  struct stat st;
  if (::lstat(o_.file.c_str(), &st) == 0) {
    // Said before a byte is fetched: a directory cannot be replaced by a file, whatever --force.
    if (S_ISDIR(st.st_mode)) return fail(o_.file + ": is a directory");
    if (!o_.force) return fail(o_.file + ": exists (--force replaces it)");
  }
  // Where the index goes, looked at before a byte is fetched: a fetch that cannot store its index
  // has not done its job.
  index::IndexStore store(o_.index_dir);
  if (store.dir().empty()) return fail("no index directory: " + store.problem());

  io::HttpOptions http = io::HttpOptions::from_environment();
  http.fetch_threads = o_.connections;
  auto client = std::make_shared<io::HttpClient>(http);
  base::Result<io::StatedObject> stated = io::stat_remote_object(*client, o_.url);
  if (!stated.ok()) return fail(stated.status().message(), exit_status_of(stated.status()));
  const uint64_t size = stated->info.size;
  const io::RemoteBytesOptions reading = fetch_reading(size, o_.connections);
  io::RemoteBytes remote(client, std::move(stated->object), std::move(stated->info), reading);

  base::Result<PendingFile> pending = PendingFile::create(o_.file);
  if (!pending.ok()) return fail(o_.file + ": " + pending.status().message());
  IndexAccess access("mibz2 fetch", {.threads = o_.threads, .index_dir = o_.index_dir}, /*warn_unsaved=*/false);
  const auto t0 = std::chrono::steady_clock::now();
  // A request's bytes a copy: the build follows the download closely, the others in flight meanwhile.
  io::DownloadBytes download(remote, pending->fd(), reading.request_bytes);
  base::Status copied;
  double download_secs = 0;
  std::thread copier([&] {
    copied = download.run();
    download_secs = seconds_since(t0);
  });

  index::BuildResult built;
  {
    Progress progress("indexing " + base::one_line(o_.file));
    auto last_drawn = std::chrono::steady_clock::time_point{};
    built = access.catalog().stream_once(download, [&](const index::BlockStream::Block& b) {
      if (o_.quiet || !progress.enabled()) return true;
      const auto now = std::chrono::steady_clock::now();
      if (now - last_drawn < std::chrono::milliseconds(200)) return true;
      last_drawn = now;
      const ProgressFigures fetched{"fetching " + base::one_line(shown_), download.done(), size, seconds_since(t0)};
      progress.update(b.record.end_bit() / 8, size, &fetched);
      return true;
    });
    if (!built.ok()) download.cancel();  // not bzip2, or out of memory: the rest is not wanted
    copier.join();
  }
  // The download's own failure first: the build's is only its echo.
  if (!copied.ok() && copied.code() != ECANCELED) return fail(download_failure(remote, copied));
  if (!built.ok()) return fail(shown_ + ": " + built.error.message(), exit_status_of(built.error));
  for (const std::string& n : built.notes) std::fprintf(stderr, "mibz2 fetch: %s: %s\n", o_.file.c_str(), base::one_line(n).c_str());

  if (base::Status synced = pending->sync(); !synced.ok()) return fail(synced.message());
  base::Result<index::SourceIdentity> id = index::identify_source(pending->fd());
  if (!id.ok()) return fail(o_.file + ": " + id.status().message());
  built.index.source = *id;
  index::StoredFile stored;
  if (base::Status saved = store.save(built.index, &stored); !saved.ok())
    return fail(o_.file + ": index not stored: " + saved.message());
  if (base::Status committed = pending->commit(o_.force); !committed.ok()) {
    store.remove_superseded(*id, stored);  // the index of a file that is not there
    return fail(committed.message());
  }
  const double secs = seconds_since(t0);
  if (!o_.quiet) summary(built.index, store.path_for(*id), secs, download_secs);
  if (!o_.output.empty()) {
    if (base::Status written = index::write_index_file(o_.output, built.index); !written.ok())
      return fail(o_.file + ": " + written.message(), exit_status_of(written));
    if (!o_.quiet) std::printf("%s: index written to %s\n", o_.file.c_str(), o_.output.c_str());
  }
  return kExitOk;
}

void Fetch::summary(const index::BlockIndex& idx, const std::string& index_path, double secs,
                    double download_secs) const {
  std::printf("%s: fetched %s in %.2f s (%.0f MB/s; downloaded in %.2f s) and indexed: %s in %s -> %s",
              o_.file.c_str(), base::human_bytes(idx.source.size).c_str(), secs,
              secs > 0 ? static_cast<double>(idx.source.size) / secs / 1e6 : 0.0, download_secs,
              base::plural(idx.blocks.size(), "block").c_str(), base::plural(idx.stream_count, "stream").c_str(),
              base::human_bytes(idx.decompressed_size).c_str());
  if (idx.damaged_blocks) std::printf(", %s", base::plural(idx.damaged_blocks, "damaged block").c_str());
  if (idx.truncated_at_bit) std::printf(", truncated");
  std::printf(", index %s\n", index_path.c_str());
}

}  // namespace

int cmd_fetch(const FetchOptions& options) { return Fetch(options).run(); }

}  // namespace mibz2::programs
