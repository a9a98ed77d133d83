#include "engine/engine.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "engine/reader.h"

namespace mibz2::engine {

uint64_t default_cache_size() {
  constexpr uint64_t kDefault = uint64_t{1} << 30;
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return kDefault;
  return std::min<uint64_t>(kDefault, static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 4);
}

static EngineOptions resolved(EngineOptions o) {
  if (o.cache_size == 0) o.cache_size = default_cache_size();
  if (o.readahead_bytes == 0) o.readahead_bytes = std::min<uint64_t>(o.cache_size / 4, uint64_t{256} << 20);
  return o;
}

Engine::Engine(const EngineOptions& options)
    : options_(resolved(options)), cache_(options_.cache_size, stats_),
      // Decodes take turns on the CPUs with this user's other mibz2 processes when MIBZ2_SHARE_CPUS=1
      // asks (machine_places.h).
      pool_(options_.threads, 0, MachinePlaces::for_this_process()) {}

Engine::~Engine() = default;

ReadAheadLimits Engine::readahead_limits() const {
  ReadAheadLimits l;
  // Enough blocks ahead to keep every running place busy, twice over (workers beyond the CPUs
  // add no decode, so no blocks ahead either).
  l.max_blocks = std::max<uint64_t>(8, 4 * uint64_t{pool_.running_limit()});
  l.max_bytes = options_.readahead_bytes;
  return l;
}

base::Result<std::shared_ptr<Reader>> Engine::open(uint64_t file_id, const std::string& path,
                                                   std::unique_ptr<io::Source> source,
                                                   const index::SourceIdentity& opened,
                                                   std::shared_ptr<const index::BlockIndex> index) {
  // Never serve old bytes for a new file: the file opened must be the one indexed.
  if (!(opened == index->source)) return base::Status::error(ESTALE, "the file changed since it was indexed");
  return std::make_shared<Reader>(*this, file_id, path, std::move(source), std::move(index));
}

}  // namespace mibz2::engine
