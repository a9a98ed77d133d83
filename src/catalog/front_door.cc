#include "catalog/front_door.h"

#include <iterator>

#include "catalog/read_handle.h"
#include "engine/reader.h"
#include "io/paths.h"
#include "io/source_url.h"

namespace mibz2::catalog {
namespace {

engine::EngineOptions engine_options(const FrontDoorOptions& o) {
  engine::EngineOptions e;
  e.threads = o.threads;
  e.cache_size = o.cache_size;
  e.readahead = o.readahead;
  e.drop_behind = o.drop_behind;
  return e;
}

// What an entry holds of memory while it is kept: the entry itself and its path, and its index
// (records and newline counts) with the Reader made from it (a byte or two of bookkeeping a block).
// *with_index: whether it had an index to count.
uint64_t memory_of(const CatalogFile& file, bool* with_index) {
  constexpr uint64_t kEntry = 1024;  // CatalogFile, its map and list nodes, a Reader's fixed part
  uint64_t bytes = kEntry + file.path().size();
  const std::shared_ptr<const index::BlockIndex> idx = file.current().index;
  *with_index = idx != nullptr;
  if (idx)
    bytes += sizeof(index::BlockIndex) + idx->blocks.capacity() * (sizeof(index::BlockRecord) + 2) +
             idx->newlines.capacity() * sizeof(uint32_t);
  return bytes;
}

}  // namespace

FrontDoor::FrontDoor(const FrontDoorOptions& options)
    : idle_files_bytes_(options.idle_files_bytes ? options.idle_files_bytes : kDefaultIdleFilesBytes),
      remote_access_(options.s3),
      by_name_access_(plain_access_, remote_access_),
      named_access_(options.named_index.empty()
                        ? std::nullopt
                        : std::make_optional<NamedIndexAccess>(options.access ? *options.access : by_name_access_,
                                                               options.named_index, remote_access_)),
      access_(named_access_ ? *named_access_
                            : options.access ? *options.access : static_cast<const SourceAccess&>(by_name_access_)),
      store_(options.index_dir),
      engine_(std::make_unique<engine::Engine>(engine_options(options))),
      catalog_(std::make_unique<Catalog>(*engine_, store_, &access_)) {}

FrontDoor::~FrontDoor() {
  {
    std::lock_guard lk(mu_);
    by_path_.clear();
    kept_.clear();
  }
  catalog_.reset();  // its builds leave the pool before the engine goes
  engine_.reset();
}

FileRef FrontDoor::file(const std::string& path) {
  const std::string absolute = io::is_url(path) ? path : io::absolute_path(path);
  std::lock_guard lk(mu_);
  FileRef file;
  if (auto it = by_path_.find(absolute); it != by_path_.end()) {
    kept_.splice(kept_.begin(), kept_, it->second);  // most recently named first
    file = kept_.front().file;
  } else {
    file = catalog_->add(absolute);
    kept_.push_front({file});
    by_path_.emplace(absolute, kept_.begin());
  }
  forget_idle_locked();
  return file;
}

void FrontDoor::forget_idle_locked() {
  // An entry is idle when the list holds the only reference: no handle, no caller, no build has it.
  // The newest idle ones are kept while they fit; in-use ones are never forgotten (nor counted).
  // Each is measured once (again once it has an index), so a walk is a few ns an entry.
  uint64_t idle_bytes = 0;
  for (auto it = kept_.begin(); it != kept_.end();) {
    if (it->file.use_count() > 1) {
      ++it;
      continue;
    }
    if (!it->with_index) it->bytes = memory_of(*it->file, &it->with_index);
    idle_bytes += it->bytes;
    if (idle_bytes <= idle_files_bytes_) {
      ++it;
      continue;
    }
    by_path_.erase(it->file->path());
    it = kept_.erase(it);
  }
}

size_t FrontDoor::kept_files() const {
  std::lock_guard lk(mu_);
  return kept_.size();
}

IndexStatus FrontDoor::obtain(const FileRef& file, bool force, const Progress& progress) {
  // The source may have changed since this process last looked: indexed again if so.
  catalog_->refresh(file);
  // Not ready before prepare() (or rebuilt) and ready as built in this process after: a build
  // finished while this call waited (its own, or another thread's it joined).
  const bool was_ready = !force && catalog_->status(file).ready();
  catalog_->prepare(file, force ? Need::kRebuild : Need::kNow);
  while (!catalog_->wait_for(file, std::chrono::milliseconds(200))) {
    const IndexStatus s = catalog_->status(file);
    if (progress && !progress(s.build_done, s.build_total)) return s;
  }
  IndexStatus s = catalog_->status(file);
  // The final count, whatever the timing: a build shorter than the first 200 ms wait would
  // otherwise report nothing, and a longer one its last figure before the end.
  if (progress && !was_ready && s.ready() && s.origin.built) {
    const uint64_t size = s.index->compressed_size();
    progress(size, size);
  }
  return s;
}

base::Result<std::unique_ptr<ReadHandle>> FrontDoor::open(const FileRef& file, std::stop_token stop) {
  base::Result<std::shared_ptr<engine::Reader>> reader = catalog_->open(file, stop);
  if (!reader.ok()) return reader.status();
  return std::make_unique<ReadHandle>(*this, file, std::move(reader).value());
}

}  // namespace mibz2::catalog
