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

Obtained obtain_index(const std::string& source_path, IndexStore& store, const ObtainOptions& options) {
  Obtained out;
  const std::string abs = absolute_path(source_path);
  out.index_path = store.dir().empty() ? std::string() : store.path_for(abs);

  const int fd = open(source_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    out.error = std::strerror(errno);
    return out;
  }
  SourceIdentity id;
  io::MappedFile file;
  const bool identified = identify_source(fd, &id, &out.error);
  if (identified && !options.force_rebuild) {
    BlockIndex loaded;
    const auto status = store.load(abs, id, &loaded, &out.not_loaded_reason);
    if (status == IndexStore::Load::kCurrent) {
      close(fd);
      out.ok = true;
      out.index = std::make_shared<const BlockIndex>(std::move(loaded));
      return out;
    }
  }
  const bool mapped = identified && file.map_fd(fd, &out.error);
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

  BuildResult built = builder.take_result();
  out.notes = std::move(built.notes);
  out.built = true;
  if (!built.ok) {
    out.error = built.error;
    return out;
  }
  built.index.source = id;
  out.saved = store.save(abs, built.index, &out.save_error);
  out.index = std::make_shared<const BlockIndex>(std::move(built.index));
  out.ok = true;
  return out;
}

}  // namespace mibz2::index
