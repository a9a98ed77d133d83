#include "tools/mount_options.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "io/mount_table.h"
#include "version.h"

namespace mibz2::tools {
namespace {

struct RawOptions {
  char* threads = nullptr;
  char* cache_size = nullptr;
  char* index_dir = nullptr;
  char* log_level = nullptr;
  int wait_index = 0;
  char* source = nullptr;  // first positional argument
  int positional = 0;
};

#define MIBZ2_OPT(t, p) {t, offsetof(RawOptions, p), 1}
const fuse_opt kOptionSpec[] = {
    {"threads=%s", offsetof(RawOptions, threads), 0},
    {"cache_size=%s", offsetof(RawOptions, cache_size), 0},
    {"index_dir=%s", offsetof(RawOptions, index_dir), 0},
    {"log_level=%s", offsetof(RawOptions, log_level), 0},
    MIBZ2_OPT("wait_index", wait_index),
    FUSE_OPT_END,
};
#undef MIBZ2_OPT

int keep_positional(void* data, const char* arg, int key, fuse_args* /*outargs*/) {
  auto* raw = static_cast<RawOptions*>(data);
  if (key == FUSE_OPT_KEY_NONOPT) {
    if (raw->positional++ == 0) {
      raw->source = strdup(arg);
      return 0;  // SOURCE is ours
    }
    return 1;  // MOUNTPOINT goes on to fuse_parse_cmdline
  }
  return 1;
}

void usage(const char* prog) {
  std::printf(
      "usage: %s [options] SOURCE MOUNTPOINT\n"
      "\n"
      "Mounts SOURCE (a directory) read-only at MOUNTPOINT, showing every bzip2 file in it as its\n"
      "decompressed content: X.bz2 as X, X.tbz2 and X.tbz as X.tar. Unmount with fusermount3 -u.\n"
      "\n"
      "mibz2fs options:\n"
      "    -o threads=N           decoder threads (default: all cores)\n"
      "    -o cache_size=SIZE     decoded-block cache, K/M/G suffixes (default: 1G or RAM/4)\n"
      "    -o index_dir=DIR       where block indexes are kept (default: $XDG_CACHE_HOME/mibz2fs)\n"
      "    -o wait_index          index every file before the mount appears (with progress)\n"
      "    -o log_level=LEVEL     trace, debug, info, warn, error or off (default: info)\n"
      "    -h   --help            this help\n"
      "    -V   --version         print the version\n"
      "\n",
      prog);
}

bool parse_size(const char* text, uint64_t* out) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || v <= 0) return false;
  double mult = 1;
  switch (*end) {
    case 0: break;
    case 'k': case 'K': mult = 1024.0; ++end; break;
    case 'm': case 'M': mult = 1024.0 * 1024; ++end; break;
    case 'g': case 'G': mult = 1024.0 * 1024 * 1024; ++end; break;
    case 't': case 'T': mult = 1024.0 * 1024 * 1024 * 1024; ++end; break;
    default: return false;
  }
  if (*end == 'i') ++end;
  if (*end == 'B' || *end == 'b') ++end;
  if (*end) return false;
  *out = static_cast<uint64_t>(v * mult);
  return *out > 0;
}

std::string absolute(const char* path) {
  char buf[PATH_MAX];
  if (realpath(path, buf)) return buf;
  return path;
}

}  // namespace

ParseOutcome parse_mount_options(int argc, char** argv, MountOptions* options, fuse_args* args) {
  *args = FUSE_ARGS_INIT(argc, argv);
  RawOptions raw;
  auto fail = [&](const std::string& message) {
    std::fprintf(stderr, "mibz2fs: %s\n", message.c_str());
    return ParseOutcome::kExitError;
  };
  // Freed on every return, the early error returns included (fuse_opt_parse strdups the %s values
  // and SOURCE before it may fail; fuse_parse_cmdline may set mountpoint and then fail).
  fuse_cmdline_opts cmd{};
  struct Free {
    fuse_cmdline_opts& c;
    RawOptions& r;
    ~Free() {
      std::free(c.mountpoint);
      std::free(r.threads);
      std::free(r.cache_size);
      std::free(r.index_dir);
      std::free(r.log_level);
      std::free(r.source);
    }
  } free_all{cmd, raw};
  if (fuse_opt_parse(args, &raw, kOptionSpec, keep_positional) != 0) return fail("cannot parse the options");
  if (fuse_parse_cmdline(args, &cmd) != 0) return ParseOutcome::kExitError;  // libfuse printed why

  if (cmd.show_help) {
    usage(argv[0]);
    std::printf("FUSE options:\n");
    fuse_cmdline_help();
    fuse_lowlevel_help();
    return ParseOutcome::kExitOk;
  }
  if (cmd.show_version) {
    std::printf("mibz2fs %s\nFUSE library version %s\n", MIBZ2FS_VERSION, fuse_pkgversion());
    fuse_lowlevel_version();
    return ParseOutcome::kExitOk;
  }
  if (!raw.source || !cmd.mountpoint) return fail("usage: mibz2fs [options] SOURCE MOUNTPOINT (try --help)");
  if (raw.positional > 2) return fail("too many arguments: expected SOURCE MOUNTPOINT");

  if (raw.threads) {
    char* end = nullptr;
    const long n = std::strtol(raw.threads, &end, 10);
    if (!*raw.threads || *end || n < 1 || n > 1024) return fail(std::string("-o threads needs 1..1024, not '") + raw.threads + "'");
    options->fs.threads = static_cast<unsigned>(n);
  }
  if (raw.cache_size && !parse_size(raw.cache_size, &options->fs.cache_bytes))
    return fail(std::string("-o cache_size needs a size such as 512M or 2G, not '") + raw.cache_size + "'");
  if (raw.index_dir) options->fs.index_dir = absolute(raw.index_dir);
  if (raw.log_level) {
    static const char* kLevels[] = {"trace", "debug", "info", "warn", "warning", "error", "critical", "off"};
    bool known = false;
    for (const char* l : kLevels) known = known || std::strcmp(l, raw.log_level) == 0;
    if (!known) return fail(std::string("-o log_level must be trace, debug, info, warn, error, critical or off, not '") +
                            raw.log_level + "'");
    options->log_level = std::strcmp(raw.log_level, "warning") == 0 ? "warn" : raw.log_level;
  }
  options->wait_index = raw.wait_index != 0;
  options->fs.source = absolute(raw.source);
  options->fs.mountpoint = absolute(cmd.mountpoint);
  options->foreground = cmd.foreground != 0;
  options->debug = cmd.debug != 0;
  options->single_thread = cmd.singlethread != 0;
  if (options->debug && !raw.log_level) options->log_level = "debug";

  // Always read-only; permissions are checked by the kernel against the mirrored modes.
  const std::string fixed = "-oro,default_permissions,fsname=" + options->fs.source + ",subtype=mibz2fs";
  fuse_opt_add_arg(args, fixed.c_str());
  return ParseOutcome::kMount;
}

std::string check_mount_paths(const MountOptions& options) {
  struct stat st;
  if (stat(options.fs.source.c_str(), &st) != 0) return "SOURCE " + options.fs.source + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return "SOURCE " + options.fs.source + " is not a directory";
  if (access(options.fs.source.c_str(), R_OK | X_OK) != 0) return "SOURCE " + options.fs.source + ": " + std::strerror(errno);
  if (stat(options.fs.mountpoint.c_str(), &st) != 0) return "MOUNTPOINT " + options.fs.mountpoint + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return "MOUNTPOINT " + options.fs.mountpoint + " is not a directory";
  // Refuse to stack a second mount on a mount point.
  if (io::is_mount_point(options.fs.mountpoint)) return "MOUNTPOINT " + options.fs.mountpoint + " is already mounted";
  if (options.fs.source == options.fs.mountpoint) return "SOURCE and MOUNTPOINT are the same directory";
  // A mount inside its own source would list itself (and its lookups would call into itself).
  if (options.fs.mountpoint.rfind(options.fs.source + "/", 0) == 0)
    return "MOUNTPOINT " + options.fs.mountpoint + " is inside SOURCE " + options.fs.source;
  // A source inside its own mount would be hidden by it, and every lookup would wait on itself.
  if (options.fs.source.rfind(options.fs.mountpoint == "/" ? "/" : options.fs.mountpoint + "/", 0) == 0)
    return "SOURCE " + options.fs.source + " is inside MOUNTPOINT " + options.fs.mountpoint;
  return {};
}

}  // namespace mibz2::tools
