// mibz2fs: mount a directory with every bzip2 file in it shown decompressed, read-only.
#include <fuse_log.h>
#include <fuse_lowlevel.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <memory>
#include <vector>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/syslog_sink.h>
#include <spdlog/spdlog.h>

#include "base/log_sink.h"
#include "base/words.h"
#include "fs/filesystem.h"
#include "fs/fuse_operations.h"
#include "fs/mount_source.h"
#include "fs/source_tree.h"
#include "io/descriptor_limit.h"
#include "io/source_root.h"
#include "io/source_url.h"
#include "programs/cli_common.h"
#include "programs/index_access.h"
#include "programs/mount_options.h"

namespace {

using mibz2::programs::MountOptions;

void setup_logging(const MountOptions& o, bool daemonized) {
  spdlog::sink_ptr sink;
  if (daemonized) sink = std::make_shared<spdlog::sinks::syslog_sink_mt>("mibz2fs", LOG_PID, LOG_DAEMON, false);
  else sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  // Every message escaped on its way to the sink (log_sink.h): names in it come from SOURCE.
  const std::shared_ptr<spdlog::logger> logger = mibz2::base::escaping_logger("mibz2fs", std::move(sink));
  logger->set_level(spdlog::level::from_str(o.log_level));
  logger->set_pattern(daemonized ? "%v" : "%Y-%m-%d %H:%M:%S.%e mibz2fs %l: %v");
  spdlog::set_default_logger(logger);
}

// The first time an open of the daemon fails for want of descriptors (io/descriptor_limit.h),
// once: every request that needs one fails until others are closed, which the log must say.
void log_descriptor_shortage(int err) {
  if (err == ENFILE) {
    spdlog::error("out of file descriptors: the system's table of open files is full (ENFILE, sysctl "
                  "fs.file-max); requests that need a descriptor fail until files are closed (said once)");
    return;
  }
  const rlim_t limit = mibz2::io::open_file_limit();
  const std::string figure = limit == RLIM_INFINITY ? std::string("unlimited") : std::to_string(limit);
  spdlog::error("out of file descriptors: this process may have {} open (RLIMIT_NOFILE) and each file open "
                "through the mount holds one; requests that need a descriptor fail with EMFILE until files "
                "are closed. Raise the hard limit (LimitNOFILE= in a systemd unit, ulimit -Hn in the shell "
                "that mounts): mibz2fs raises its soft limit to it (said once)",
                figure);
}

// libfuse's own messages (an unknown option, a failed mount, a request at -d) in our words:
// "mibz2fs: ..." on stderr until the logger is set up, then through it (syslog when daemonized).
// libfuse may write one line in several calls, so each thread gathers a whole line first.
std::atomic<bool> g_logger_ready{false};

void forward_fuse_log(enum fuse_log_level level, const char* fmt, va_list ap) {
  thread_local std::string line;
  char buf[1024];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  line += buf;
  if (line.empty() || line.back() != '\n') return;
  const std::string message = mibz2::programs::fuse_message_in_our_words(std::exchange(line, std::string()));
  if (!g_logger_ready.load()) {
    std::fprintf(stderr, "mibz2fs: %s\n", message.c_str());
    return;
  }
  switch (level) {
    case FUSE_LOG_EMERG:
    case FUSE_LOG_ALERT:
    case FUSE_LOG_CRIT: spdlog::critical("{}", message); break;
    case FUSE_LOG_ERR: spdlog::error("{}", message); break;
    case FUSE_LOG_WARNING: spdlog::warn("{}", message); break;
    case FUSE_LOG_NOTICE:
    case FUSE_LOG_INFO: spdlog::info("{}", message); break;
    case FUSE_LOG_DEBUG: spdlog::debug("{}", message); break;
  }
}

// -o wait_index: every compressed file indexed before the mount appears, with progress shown.
// Indexes that cannot be stored are lost with this catalog: the mount then builds them again.
void index_everything(const MountOptions& o) {
  // IndexAccess says what the user needs here (progress, damage, failures) on stderr; the engine's
  // log would say it again, on stdout, before the logger is set up. The mount's logger comes later.
  spdlog::set_level(spdlog::level::off);
  // Reached as the mount reaches them: beneath SOURCE, never through a symlink (or by request).
  mibz2::base::Result<mibz2::fs::MountSource> source = mibz2::fs::open_mount_source(o.fs.source);
  if (!source.ok()) {
    std::fprintf(stderr, "mibz2fs: %s\n", source.status().message().c_str());
    return;
  }
  const mibz2::io::SourceRoot& root = *source->root;
  struct Found {
    std::string rel;
    mibz2::catalog::ShownEntry entry;
  };
  std::vector<Found> files;
  uint64_t all_bytes = 0;  // compressed, of every file
  mibz2::fs::for_each_decompressed_file(root, [] { return false; }, [&](const std::string& rel, const mibz2::catalog::ShownEntry& e) {
    files.push_back({rel, e});
    struct stat st;
    if (root.lstat(rel, &st) == 0) all_bytes += static_cast<uint64_t>(st.st_size);
  });
  mibz2::programs::IndexAccess indexes("mibz2fs", {.threads = o.fs.threads, .index_dir = o.fs.index_dir,
                                                  .access = source->access.get(),
                                                  .named_index = o.fs.named_index});
  // The total, under each file's bar: bytes of the files done (built or loaded) and of the one
  // being built, files done, and the ETA at the rate of the builds so far.
  const auto start = std::chrono::steady_clock::now();
  uint64_t done_bytes = 0;
  size_t done_files = 0;
  auto total_figures = [&](uint64_t file_done) {
    mibz2::programs::ProgressFigures t;
    t.label = "total: " + std::to_string(done_files) + "/" + std::to_string(files.size()) + " files";
    t.done = std::min(all_bytes, done_bytes + file_done);
    t.total = all_bytes;
    t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return t;
  };
  indexes.set_overall_progress(total_figures);
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string path = root.absolute(files[i].rel);
    const auto file = indexes.catalog().add(path, files[i].entry.stamp.device, files[i].entry.stamp.inode);
    const auto got = indexes.obtain(file, path, false, false);
    struct stat st;
    if (root.lstat(files[i].rel, &st) == 0) done_bytes += static_cast<uint64_t>(st.st_size);
    ++done_files;
    if (got.ready() && got.origin.built) {
      // The total, without a terminal too: one line per file built.
      const mibz2::programs::ProgressFigures t = total_figures(0);
      const double rate = t.seconds > 0 ? static_cast<double>(t.done) / t.seconds : 0;
      std::string eta = "unknown";
      if (t.done >= t.total) eta = "0 s";
      else if (rate > 0) eta = std::to_string(std::llround(static_cast<double>(t.total - t.done) / rate)) + " s";
      std::fprintf(stderr, "mibz2fs: [%zu/%zu] indexed %s (total %s of %s, ETA %s)\n", i + 1, files.size(),
                   mibz2::base::one_line(path).c_str(), mibz2::base::human_bytes(t.done).c_str(), mibz2::base::human_bytes(t.total).c_str(),
                   eta.c_str());
    }
  }
}

// Runs the session loop until unmounted or signalled: 0, or 1 when the loop failed.
int serve(mibz2::fs::Filesystem& fs, fuse_session* se, const MountOptions& options) {
  fs.set_session(se);
  fs.start_tree_walk();
  int rc;
  if (options.single_thread) {
    rc = fuse_session_loop(se);
  } else {
    fuse_loop_config* cfg = fuse_loop_cfg_create();
    fuse_loop_cfg_set_max_threads(cfg, options.max_fuse_threads);
    fuse_loop_cfg_set_idle_threads(cfg, options.max_idle_fuse_threads);
    fuse_loop_cfg_set_clone_fd(cfg, options.clone_fd ? 1 : 0);
    rc = fuse_session_loop_mt(se, cfg);
    fuse_loop_cfg_destroy(cfg);
  }
  fs.end_session();
  // 0: unmounted (fusermount3 -u); > 0: the signal (SIGINT, SIGTERM, SIGHUP) that ended it.
  return rc >= 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // Every file open through the mount holds a descriptor: as many as the hard limit allows.
  const mibz2::io::OpenFileLimit fd_limit = mibz2::io::raise_open_file_limit();
  using mibz2::programs::MountCommandLine;
  MountOptions options;
  fuse_args args;
  const MountCommandLine command_line = mibz2::programs::parse_mount_options(argc, argv, &options, &args);
  struct FreeArgs {
    fuse_args& a;
    ~FreeArgs() { fuse_opt_free_args(&a); }  // idempotent: fuse_session_new's copy is its own
  } free_args{args};
  switch (command_line.outcome) {
    case MountCommandLine::Outcome::kHelp: std::fputs(mibz2::programs::mount_help().c_str(), stdout); return 0;
    case MountCommandLine::Outcome::kVersion:
      std::fputs(mibz2::programs::mount_version().c_str(), stdout);
      std::fflush(stdout);  // fuse_lowlevel_version() runs fusermount3, which writes on its own
      fuse_lowlevel_version();
      return 0;
    case MountCommandLine::Outcome::kError: std::fprintf(stderr, "mibz2fs: %s\n", command_line.error.c_str()); return 1;
    case MountCommandLine::Outcome::kMount: break;
  }
  for (const std::string& w : command_line.warnings) std::fprintf(stderr, "mibz2fs: %s\n", w.c_str());
  if (const std::string problem = mibz2::programs::check_mount_paths(options); !problem.empty()) {
    std::fprintf(stderr, "mibz2fs: %s\n", problem.c_str());
    return 1;
  }
  // A remote SOURCE is asked for once now, so that a mistyped URL or a missing credential is said
  // here (it is opened again after daemonizing: fork keeps no thread of its client).
  if (mibz2::io::is_url(options.fs.source)) {
    if (const auto probe = mibz2::fs::open_mount_source(options.fs.source); !probe.ok()) {
      std::fprintf(stderr, "mibz2fs: %s\n", probe.status().message().c_str());
      return 1;
    }
  }
  fuse_set_log_func(forward_fuse_log);

  // The session is made (and the FUSE options it does not know rejected) before any indexing.
  // The Filesystem (and its threads) is made after daemonizing: fork keeps only the calling thread.
  std::unique_ptr<mibz2::fs::Filesystem> fs;
  mibz2::fs::Operations* ops_ptr = nullptr;  // the session's userdata: set once the Filesystem is made
  fuse_session* se = fuse_session_new(&args, &mibz2::fs::fuse_operations(), sizeof(fuse_lowlevel_ops), &ops_ptr);
  if (!se) return 1;  // forward_fuse_log said why (e.g. an unknown option)
  if (options.wait_index) index_everything(options);
  int status = 1;
  if (fuse_set_signal_handlers(se) == 0) {
    if (fuse_session_mount(se, options.fs.mountpoint.c_str()) == 0) {
      if (fuse_daemonize(options.foreground ? 1 : 0) == 0) {
        setup_logging(options, !options.foreground);
        g_logger_ready = true;
        if (fd_limit.error)
          spdlog::warn("cannot raise the open file limit (RLIMIT_NOFILE, soft {}, hard {}): {}", fd_limit.soft,
                       fd_limit.hard, std::strerror(fd_limit.error));
        else if (fd_limit.soft != fd_limit.soft_before)
          spdlog::info("open file limit (RLIMIT_NOFILE) raised from {} to {}", fd_limit.soft_before, fd_limit.soft);
        mibz2::io::on_descriptor_shortage(log_descriptor_shortage);
        // SOURCE is opened after daemonizing too: a remote one's client may start threads.
        mibz2::base::Result<mibz2::fs::MountSource> source = mibz2::fs::open_mount_source(options.fs.source);
        if (source.ok()) {
          fs = std::make_unique<mibz2::fs::Filesystem>(options.fs, std::move(*source));
          ops_ptr = &fs->operations();
          status = serve(*fs, se, options);
        } else {
          spdlog::error("{}", source.status().message());
        }
      }
      fuse_session_unmount(se);
    }
    fuse_remove_signal_handlers(se);
  }
  fs.reset();
  fuse_session_destroy(se);
  return status;
}
