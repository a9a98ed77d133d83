#include "index/index_loader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "index/index_builder.h"
#include "io/mapped_file.h"

namespace mibz2::index {

std::string absolute_path(const std::string& path) {
  char buf[PATH_MAX];
  if (realpath(path.c_str(), buf)) return buf;
  return path;
}

namespace {

// Opens the source, reads its identity and, unless force_rebuild, returns its current stored index.
// On return *fd is open (or -1 after an error, in out.error) unless the index was loaded.
bool open_and_load(const std::string& source_path, IndexStore& store, bool force_rebuild, Obtained& out, int* fd,
                   SourceIdentity* id) {
  const std::string abs = absolute_path(source_path);
  out.index_path = store.dir().empty() ? std::string() : store.path_for(abs);
  *fd = open(source_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (*fd < 0) {
    out.error = std::strerror(errno);
    return false;
  }
  if (!identify_source(*fd, id, &out.error)) {
    close(*fd);
    *fd = -1;
    return false;
  }
  if (force_rebuild) return false;
  BlockIndex loaded;
  if (store.load(abs, *id, &loaded, &out.not_loaded_reason) != IndexStore::Load::kCurrent) return false;
  close(*fd);
  *fd = -1;
  out.ok = true;
  out.index = std::make_shared<const BlockIndex>(std::move(loaded));
  return true;
}

// Finishes a build: its notes and index go into `out`, and the index is stored.
void finish(BuildResult built, const SourceIdentity& id, const std::string& source_path, IndexStore& store,
            Obtained& out) {
  out.notes = std::move(built.notes);
  out.built = true;
  if (!built.ok) {
    out.error = built.error;
    return;
  }
  built.index.source = id;
  out.saved = store.save(absolute_path(source_path), built.index, &out.save_error);
  out.index = std::make_shared<const BlockIndex>(std::move(built.index));
  out.ok = true;
}

}  // namespace

Obtained load_if_current(const std::string& source_path, IndexStore& store) {
  Obtained out;
  int fd;
  SourceIdentity id;
  if (!open_and_load(source_path, store, false, out, &fd, &id) && fd >= 0) close(fd);
  return out;
}

Obtained decode_and_index(const std::string& source_path, IndexStore& store, unsigned threads,
                          const std::function<bool(const StreamedBlock&)>& sink, bool* stopped) {
  Obtained out;
  *stopped = false;
  int fd;
  SourceIdentity id;
  open_and_load(source_path, store, /*force_rebuild=*/true, out, &fd, &id);
  if (fd < 0) return out;
  io::MappedFile file;
  const bool mapped = file.map_fd(fd, &out.error);
  close(fd);
  if (!mapped) return out;
  file.advise_sequential();

  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  IndexBuilder builder(file.bytes(), 4 * size_t{threads}, /*keep_output=*/true);
  std::vector<std::thread> workers;
  for (unsigned i = 0; i < threads; ++i) workers.emplace_back([&builder] { builder.work(); });
  IndexBuilder::OutputBlock block;
  while (builder.next_output(&block)) {
    if (!sink({block.bytes.data(), block.bytes.size(), block.block, block.damaged})) {
      *stopped = true;
      builder.cancel();
      break;
    }
  }
  for (auto& t : workers) t.join();
  if (*stopped) return out;
  finish(builder.take_result(), id, source_path, store, out);
  return out;
}

Obtained obtain_index(const std::string& source_path, IndexStore& store, const ObtainOptions& options) {
  Obtained out;
  int fd;
  SourceIdentity id;
  if (open_and_load(source_path, store, options.force_rebuild, out, &fd, &id)) return out;
  if (fd < 0) return out;
  io::MappedFile file;
  const bool mapped = file.map_fd(fd, &out.error);
  close(fd);
  if (!mapped) return out;

  const unsigned threads = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  IndexBuilder builder(file.bytes(), 4 * size_t{threads});
  std::vector<std::thread> workers;
  for (unsigned i = 0; i < threads; ++i) workers.emplace_back([&builder] { builder.work(); });
  while (!builder.wait_finished(std::chrono::milliseconds(200))) {
    if (options.progress) options.progress(builder.bytes_done(), builder.bytes_total());
  }
  for (auto& t : workers) t.join();
  if (options.progress) options.progress(builder.bytes_total(), builder.bytes_total());
  finish(builder.take_result(), id, source_path, store, out);
  return out;
}

}  // namespace mibz2::index
