// When a stored index is believed: the Catalog's loading of a file's index from the index
// directory (by the content's name) or from the sidecar next to the source, on the caller's thread.
//
//  - An index file is read only if the trust rule believes it (index/index_trust.h: written by
//    this user or root, in a directory only they can change); one that is not believed is named
//    in the log once (ReportOnce), and the file is indexed as if there were none.
//  - One whose identity is the source's, all of it (size, fingerprint, mtime, inode), is used.
//  - One of the same content (size and fingerprint) but another mtime or inode (a copy; and every
//    sidecar, which comes from elsewhere) is used once a sample of 8 blocks spread over the file
//    decodes exactly as its records say (index::sample_blocks, decoded side by side on the pool at
//    demand priority while the loading thread waits: tens of milliseconds). One that records
//    damage is never used for a copy: damage is a fact about one file's bytes.
//  - A read of the source that fails on the way judges nothing: the file fails for now (the
//    machine's problem, retried at the next need), the index neither used nor rejected.
//
// Locks: none of its own but ReportOnce's leaf; it never holds one while it reads or decodes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/report_once.h"
#include "catalog/catalog_file.h"
#include "catalog/catalog_report.h"
#include "catalog/source_access.h"
#include "engine/engine.h"
#include "index/block_check.h"
#include "index/block_index.h"
#include "index/index_store.h"
#include "io/source_bytes.h"

namespace mibz2::catalog {

class StoredIndexLoader {
 public:
  // `engine` decodes the samples; `store` and `access` (and this) must outlive their use here.
  StoredIndexLoader(engine::Engine& engine, const index::IndexStore& store, const SourceAccess& access)
      : engine_(engine), store_(store), access_(access) {}

  // What a load found for a file: one of an index to use, a failure for now, or nothing usable.
  struct Found {
    std::shared_ptr<const index::BlockIndex> index;  // an index that describes the source: use it
    IndexOrigin origin;                               // with `index`: where it came from
    base::Status failure;  // not ok: the file fails for now (it cannot be opened, or a sample could
                           // not be read): the machine's (base::is_environment)
    std::string not_used;  // otherwise: why stored indexes were not used (empty: there were none)
  };
  // Opens the file's source (noting its size in the entry), and looks for its index.
  Found load(CatalogFile& file);

 private:
  // A stored or sidecar index whose content identity matches the source's (size, fingerprint)
  // while its mtime or inode do not: checks a sample of its blocks against `source`. ok: it
  // describes this file (its identity is made the source's, *origin says how long it took). Else
  // why not (EBADMSG: it records damage, or a block differs), or the read of the source that failed
  // on the way (the machine's, base::is_environment): the index is then neither used nor judged.
  base::Status accept_same_content(const CatalogFile& file, const io::SourceBytes& source,
                                   const index::SourceIdentity& id, index::BlockIndex* loaded,
                                   IndexOrigin* origin) const;
  // Checks `blocks` of `idx` against `source` (index::check_block), in parallel on the pool. kOk
  // when all match; else what the first in order that did not found (its `why` in words, with the
  // block). A read error is no mismatch: it says nothing of the index.
  index::BlockCheck check_blocks(const index::BlockIndex& idx, const std::vector<size_t>& blocks,
                                 const io::SourceBytes& source) const;

  engine::Engine& engine_;
  const index::IndexStore& store_;
  const SourceAccess& access_;
  ReportOnce reported_untrusted_;  // index files not believed, logged once each
};

}  // namespace mibz2::catalog
