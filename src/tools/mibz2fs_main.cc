// mibz2fs: mount a directory with every bzip2 file in it shown decompressed, read-only.
#include <fuse_lowlevel.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/syslog_sink.h>
#include <spdlog/spdlog.h>

#include "fs/filesystem.h"
#include "fs/beneath_access.h"
#include "fs/source_tree.h"
#include "io/source_root.h"
#include "tools/index_access.h"
#include "tools/mount_options.h"

namespace {

using mibz2::tools::MountOptions;

void setup_logging(const MountOptions& o, bool daemonized) {
  std::shared_ptr<spdlog::logger> logger;
  if (daemonized) {
    logger = spdlog::syslog_logger_mt("mibz2fs", "mibz2fs", LOG_PID, LOG_DAEMON);
  } else {
    logger = spdlog::stderr_color_mt("mibz2fs");
  }
  logger->set_level(spdlog::level::from_str(o.log_level));
  logger->set_pattern(daemonized ? "%v" : "%Y-%m-%d %H:%M:%S.%e mibz2fs %l: %v");
  spdlog::set_default_logger(logger);
}

// -o wait_index: every compressed file indexed before the mount appears, with progress shown.
// Indexes that cannot be stored are lost with this catalog: the mount then builds them again.
void index_everything(const MountOptions& o) {
  // Reached as the mount reaches them: beneath SOURCE, never through a symlink.
  mibz2::io::SourceRoot root;
  if (const int err = root.open(o.fs.source)) {
    std::fprintf(stderr, "mibz2fs: %s: %s\n", o.fs.source.c_str(), std::strerror(err));
    return;
  }
  struct Found {
    std::string rel;
    mibz2::fs::ShownEntry entry;
  };
  std::vector<Found> files;
  mibz2::fs::for_each_decompressed_file(root, [] { return false; }, [&](const std::string& rel, const mibz2::fs::ShownEntry& e) {
    files.push_back({rel, e});
  });
  const mibz2::fs::BeneathAccess access(root);
  mibz2::tools::IndexAccess indexes("mibz2fs", o.fs.threads, o.fs.index_dir, 0, &access);
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string path = root.absolute(files[i].rel);
    const auto file = indexes.catalog().add(path, files[i].entry.device, files[i].entry.inode);
    const auto got = indexes.obtain(file, path, false, false);
    if (got.ready() && got.origin.built)
      std::fprintf(stderr, "mibz2fs: [%zu/%zu] indexed %s\n", i + 1, files.size(), path.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  MountOptions options;
  fuse_args args;
  switch (mibz2::tools::parse_mount_options(argc, argv, &options, &args)) {
    case mibz2::tools::ParseOutcome::kExitOk: fuse_opt_free_args(&args); return 0;
    case mibz2::tools::ParseOutcome::kExitError: fuse_opt_free_args(&args); return 1;
    case mibz2::tools::ParseOutcome::kMount: break;
  }
  if (const std::string problem = mibz2::tools::check_mount_paths(options); !problem.empty()) {
    std::fprintf(stderr, "mibz2fs: %s\n", problem.c_str());
    fuse_opt_free_args(&args);
    return 1;
  }
  if (options.wait_index) index_everything(options);

  // The Filesystem (and its threads) is made after daemonizing: fork keeps only the calling thread.
  std::unique_ptr<mibz2::fs::Filesystem> fs;
  mibz2::fs::Filesystem* fs_ptr = nullptr;
  fuse_session* se = fuse_session_new(&args, &mibz2::fs::Filesystem::operations(),
                                      sizeof(fuse_lowlevel_ops), &fs_ptr);
  fuse_opt_free_args(&args);
  if (!se) return 1;  // libfuse printed why (e.g. an unknown option)
  int status = 1;
  if (fuse_set_signal_handlers(se) == 0) {
    if (fuse_session_mount(se, options.fs.mountpoint.c_str()) == 0) {
      if (fuse_daemonize(options.foreground ? 1 : 0) == 0) {
        setup_logging(options, !options.foreground);
        fs = std::make_unique<mibz2::fs::Filesystem>(options.fs);
        fs_ptr = fs.get();
        fs->set_session(se);
        fs->start_tree_walk();
        int rc;
        if (options.single_thread) {
          rc = fuse_session_loop(se);
        } else {
          fuse_loop_config* cfg = fuse_loop_cfg_create();
          fuse_loop_cfg_set_max_threads(cfg, options.max_fuse_threads);
          fuse_loop_cfg_set_idle_threads(cfg, 10);
          rc = fuse_session_loop_mt(se, cfg);
          fuse_loop_cfg_destroy(cfg);
        }
        // 0: unmounted (fusermount3 -u); > 0: the signal (SIGINT, SIGTERM, SIGHUP) that ended it.
        status = rc >= 0 ? 0 : 1;
      }
      fuse_session_unmount(se);
    }
    fuse_remove_signal_handlers(se);
  }
  fs.reset();
  fuse_session_destroy(se);
  return status;
}
