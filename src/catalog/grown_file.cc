#include "catalog/grown_file.h"

#include <string>

#include <spdlog/spdlog.h>

namespace mibz2::catalog {

GrownFile grown_from(const CatalogFile& file, const index::SourceIdentity& id, const io::SourceBytes& bytes) {
  GrownFile grown;
  CatalogFile::Previous previous = file.previous();
  if (!previous.index) return grown;
  const index::BlockIndex& old = *previous.index;
  std::string why;
  if (!index::grew_from(old, id, bytes, &why)) {
    spdlog::debug("{}: indexed from its start, not from its index before it changed: {}", file.name(), why);
    return grown;
  }
  grown.from = std::move(previous);
  grown.kept = index::resumable_prefix(old, &why);
  if (!grown.kept) {
    spdlog::info("{}: grew from {} to {} bytes; indexing it from its start ({})", file.name(), old.source.size,
                 id.size, why);
    return grown;
  }
  spdlog::info("{}: grew from {} to {} bytes; keeping {} blocks of its index, indexing from byte {}", file.name(),
               old.source.size, id.size, grown.kept->blocks.size(), grown.kept->bytes_kept());
  return grown;
}

void remove_superseded(const index::IndexStore& store, const CatalogFile& file, const GrownFile& grown) {
  if (!grown.from.index || !grown.from.stored.known()) return;
  if (store.remove_superseded(grown.from.index->source, grown.from.stored))
    spdlog::debug("{}: removed {}, the index of its first {} bytes", file.name(),
                  store.path_for(grown.from.index->source), grown.from.index->source.size);
}

}  // namespace mibz2::catalog
