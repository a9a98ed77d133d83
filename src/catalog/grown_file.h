// A build of a file whose source grew since its last index (a download, a log appended to): what it
// keeps of that index, and the removal of the index file the new one supersedes (index/FORMAT.md,
// "A file that grew"; index/index_prefix.h). The BuildDriver's, at the start and at the end of a
// build from the queue (never a stream's: its consumer wants every block).
#pragma once

#include <optional>

#include "catalog/catalog_file.h"
#include "index/block_index.h"
#include "index/index_prefix.h"
#include "index/index_store.h"
#include "io/source_bytes.h"

namespace mibz2::catalog {

struct GrownFile {
  CatalogFile::Previous from;              // the index the file had, when it grew from it (else none)
  std::optional<index::IndexPrefix> kept;  // what the build keeps of it (none: from the start)
};

// Whether `file`'s source, opened with identity `id` and read through `bytes`, grew from the index
// the file had before it changed (CatalogFile::previous), and what a build of it keeps of that.
// Said in the log when it grew.
GrownFile grown_from(const CatalogFile& file, const index::SourceIdentity& id, const io::SourceBytes& bytes);

// The new index of a file that grew is stored: the file holding the index it had is removed from
// the index directory, if it is the one this process wrote or read there and this user's
// (IndexStore::remove_superseded).
void remove_superseded(const index::IndexStore& store, const CatalogFile& file, const GrownFile& grown);

}  // namespace mibz2::catalog
