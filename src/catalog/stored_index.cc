#include "catalog/stored_index.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <future>

#include <spdlog/spdlog.h>

namespace mibz2::catalog {

StoredIndexLoader::Found StoredIndexLoader::load(CatalogFile& file) {
  Found found;
  base::Result<OpenedSource> opened = open_source(access_, file);
  if (!opened.ok()) {
    found.failure = opened.status();
    return found;
  }
  const index::SourceIdentity& id = opened->id;
  const io::Source& source = *opened->source;
  file.note_source_size(id.size);
  std::vector<std::string> not_used;  // why stored indexes were not used, for the build's origin
  std::string untrusted;              // those not believed (index_trust.h): logged once, not each load

  // An index file found for the source: used if it describes it (one of the same content, or any
  // when `sample`, once a sample of its blocks decodes as its records say); a sample that could
  // not be read fails the file for now; otherwise why it was not used is kept. True: decided.
  auto consider = [&](index::LoadedIndex got, IndexOrigin origin, bool sample) {
    base::Status why = std::move(got.why);
    if (got.load == index::Load::kCurrent || got.load == index::Load::kSameContent) {
      got.index.source.ctime_ns = id.ctime_ns;  // index files do not keep it: the file's, as just confirmed
      // The file's own index in the index directory (made from this very file, not a copy's): the
      // one a build of the file grown supersedes and removes.
      if (got.load == index::Load::kCurrent && !sample) origin.stored_file = got.file;
      if (sample || got.load == index::Load::kSameContent)
        why = accept_same_content(file, source, id, &got.index, &origin);
      if (why.ok()) {
        found.index = std::make_shared<const index::BlockIndex>(std::move(got.index));
        found.origin = std::move(origin);
        return true;
      }
      if (base::is_environment(why)) {
        found.failure = std::move(why);
        return true;
      }
    }
    if (got.load == index::Load::kMissing) return false;
    if (got.load != index::Load::kUntrusted) {
      not_used.push_back(why.message());
    } else {
      if (reported_untrusted_.first(file.name() + '\n' + why.message()))
        spdlog::warn("{}: index file not used, the file is indexed as if there were none: {}", file.name(),
                     why.message());
      untrusted += (untrusted.empty() ? "" : "; ") + why.message();
    }
    return false;
  };

  // The index directory, by the content's name: this very file's index, or a copy's.
  IndexOrigin in_store;
  in_store.index_path = store_.dir().empty() ? std::string() : store_.path_for(id);
  if (consider(store_.load(id), std::move(in_store), /*sample=*/false)) return found;

  // A sidecar published with the source, read only. Whatever its mtime and inode say, it is
  // checked against a sample of the source's blocks: it comes from elsewhere.
  if (base::Result<index::LoadedIndex> got = access_.load_sidecar(file, id); got.ok()) {
    IndexOrigin from_sidecar;
    from_sidecar.index_path = access_.sidecar_name(file);
    from_sidecar.sidecar = true;
    if (consider(std::move(got).value(), std::move(from_sidecar), /*sample=*/true)) return found;
  } else if (got.status().code() != ENOENT) {
    not_used.push_back(got.status().message());
  }

  std::string why;
  for (const std::string& r : not_used) why += (why.empty() ? "" : "; ") + r;
  if (!why.empty()) spdlog::warn("{}: stored index not used, rebuilding: {}", file.name(), why);
  if (!untrusted.empty()) why += (why.empty() ? "" : "; ") + untrusted;
  found.not_used = std::move(why);
  return found;
}

// The blocks are decoded on the pool at demand priority, side by side (a reader waits for them as
// for any read); the caller waits for all of them, so the references the jobs hold stay valid.
index::BlockCheck StoredIndexLoader::check_blocks(const index::BlockIndex& idx, const std::vector<size_t>& blocks,
                                                  const io::SourceBytes& source) const {
  std::vector<std::future<index::BlockCheck>> results;
  results.reserve(blocks.size());
  for (size_t b : blocks) {
    auto done = std::make_shared<std::promise<index::BlockCheck>>();
    results.push_back(done->get_future());
    engine_.pool().submit(engine::Priority::kDemand, [&idx, &source, b, done](engine::WorkerContext& ctx) {
      try {
        base::ByteBuffer out;
        index::BlockCheck c = index::check_block(idx, b, source, ctx.decoder, ctx.compressed, out);
        if (c.kind != index::BlockCheck::kOk) c.why = base::Status::error(c.why.code(), index::describe_check(idx, b, c));
        done->set_value(std::move(c));
      } catch (const std::exception& e) {
        done->set_value({index::BlockCheck::kMismatch,
                         base::Status::error(ENOMEM, index::describe_block(idx, b) + ": cannot decode: " + e.what())});
      }
    });
  }
  index::BlockCheck first;
  for (auto& r : results) {
    index::BlockCheck c = r.get();
    if (first.kind == index::BlockCheck::kOk) first = std::move(c);
  }
  return first;
}

base::Status StoredIndexLoader::accept_same_content(const CatalogFile& file, const io::SourceBytes& source,
                                                    const index::SourceIdentity& id, index::BlockIndex* loaded,
                                                    IndexOrigin* origin) const {
  const std::string named = origin->sidecar ? origin->index_path : std::string("the stored index");
  // Damage is a fact about one file's bytes: an index recording it is trusted only for the file it
  // was made from. A copy with the same size and fingerprint may well be intact (the damage lies
  // between the fingerprinted ends), and its blocks would then read as errors; it is indexed anew.
  // Every kind of damage (truncation and stream CRC mismatch too) is a damaged record, counted.
  MIBZ2_RETURN_ERROR_IF(loaded->damaged_blocks, EBADMSG,
                        named + " records damage, which is trusted only for the file it was made from");
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<size_t> sample = index::sample_blocks(*loaded);
  const index::BlockCheck check = check_blocks(*loaded, sample, source);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const size_t checked = sample.size();
  // A read error is no mismatch: the index is neither used nor rejected (nor rebuilt, which would
  // read the same bytes); the file fails for now (its errno is the machine's) and is tried again.
  if (check.kind == index::BlockCheck::kReadError)
    return base::Status::os_error(check.why.code(), "cannot validate " + named + ": " + check.why.message());
  MIBZ2_RETURN_ERROR_IF(check.kind != index::BlockCheck::kOk, EBADMSG,
                        named + " has this file's size and fingerprint but not its blocks: " + check.why.message());
  spdlog::info("{}: index {} validated for this copy ({} of {} blocks checked in {:.0f} ms)", file.name(),
               origin->index_path, checked, loaded->blocks.size(), secs * 1000);
  // From here on it is this file's index: refresh() and Engine::open compare with this identity.
  loaded->source = id;
  origin->validated = true;
  origin->validation_seconds = secs;
  origin->blocks_validated = checked;
  return {};
}

}  // namespace mibz2::catalog
