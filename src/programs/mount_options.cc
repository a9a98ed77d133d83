#include "programs/mount_options.h"

#include <fuse_log.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "base/settings.h"
#include "base/words.h"
#include "engine/decoder_pool.h"
#include "engine/engine.h"
#include "index/index_dir.h"
#include "io/mount_table.h"
#include "io/paths.h"
#include "io/source_url.h"
#include "programs/cli_common.h"
#include "version.h"

namespace mibz2::programs {
namespace {

// What fuse_opt_parse fills: our options, as given (checked afterwards), and the positionals.
struct RawOptions {
  char* threads = nullptr;
  char* cache_size = nullptr;
  char* index_dir = nullptr;
  char* index = nullptr;
  char* log_level = nullptr;
  char* max_threads = nullptr;
  char* max_idle_threads = nullptr;
  int wait_index = 0;
  int help = 0;
  int version = 0;
  char* source = nullptr;      // first positional argument
  char* mountpoint = nullptr;  // second
  char* stray = nullptr;       // third, if any (an error)

  ~RawOptions() {
    for (char* p : {threads, cache_size, index_dir, index, log_level, max_threads, max_idle_threads, source, mountpoint, stray})
      std::free(p);
  }
};

// A "%s" template stores a strdup'd value (freeing an earlier one: the last occurrence wins); a
// plain template stores 1. Either way the argument is consumed: libfuse never sees it.
const fuse_opt kOptionSpec[] = {
    {"threads=%s", offsetof(RawOptions, threads), 0},
    {"cache_size=%s", offsetof(RawOptions, cache_size), 0},
    {"index_dir=%s", offsetof(RawOptions, index_dir), 0},
    {"index=%s", offsetof(RawOptions, index), 0},
    {"log_level=%s", offsetof(RawOptions, log_level), 0},
    {"max_threads=%s", offsetof(RawOptions, max_threads), 0},
    {"max_idle_threads=%s", offsetof(RawOptions, max_idle_threads), 0},
    {"wait_index", offsetof(RawOptions, wait_index), 1},
    {"-h", offsetof(RawOptions, help), 1},
    {"--help", offsetof(RawOptions, help), 1},
    {"-V", offsetof(RawOptions, version), 1},
    {"--version", offsetof(RawOptions, version), 1},
    FUSE_OPT_END,
};

// SOURCE, MOUNTPOINT and any stray positional are ours, so that libfuse never judges (or prints
// about) a mount point; every other option goes on to fuse_parse_cmdline and fuse_session_new.
int take_positionals(void* data, const char* arg, int key, fuse_args* /*outargs*/) {
  if (key != FUSE_OPT_KEY_NONOPT) return 1;
  auto* raw = static_cast<RawOptions*>(data);
  char** slot = !raw->source ? &raw->source : !raw->mountpoint ? &raw->mountpoint : &raw->stray;
  if (!*slot) *slot = strdup(arg);
  return 0;
}

// libfuse's option parser reports through fuse_log ("fuse: missing argument after `-o'"): while
// we parse, its words are kept here and become our one-line error.
std::string g_fuse_said;
void keep_fuse_message(enum fuse_log_level /*level*/, const char* fmt, va_list ap) {
  char buf[512];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  g_fuse_said += buf;
}

struct CaptureFuseLog {
  CaptureFuseLog() {
    g_fuse_said.clear();
    fuse_set_log_func(keep_fuse_message);
  }
  ~CaptureFuseLog() { fuse_set_log_func(nullptr); }  // back to libfuse's own (stderr)
};

constexpr const char* kUsage = "usage: mibz2fs [options] SOURCE MOUNTPOINT";

// "-o threads: 'x' is not ..."
std::string bad(std::string_view option, const std::string& why) {
  std::string s = "-o ";
  s.append(option);
  s += ": ";
  s += why;
  return s;
}

constexpr const char* kLogLevels[] = {"trace", "debug", "info", "warn", "warning", "error", "critical", "off"};

}  // namespace

std::string fuse_message_in_our_words(std::string message) {
  if (message.rfind("fuse: ", 0) == 0) message.erase(0, 6);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  for (char& c : message)
    if (c == '`') c = '\'';
  if (message.rfind("unknown option", 0) == 0) message += " (try --help)";
  return message;
}

MountCommandLine parse_mount_options(int argc, char** argv, MountOptions* options, fuse_args* args) {
  *args = FUSE_ARGS_INIT(argc, argv);
  MountCommandLine result;
  auto fail = [&](std::string message) {
    result.outcome = MountCommandLine::Outcome::kError;
    result.error = base::one_line(message);  // arguments are quoted in it: keep it one line
    return result;
  };
  RawOptions raw;
  fuse_cmdline_opts cmd{};
  struct FreeMountpoint {
    fuse_cmdline_opts& c;
    ~FreeMountpoint() { std::free(c.mountpoint); }  // never set: no positional reaches libfuse
  } free_mountpoint{cmd};
  {
    CaptureFuseLog capture;
    if (fuse_opt_parse(args, &raw, kOptionSpec, take_positionals) != 0 || fuse_parse_cmdline(args, &cmd) != 0)
    {
      std::string why = g_fuse_said.empty() ? "cannot parse the options" : fuse_message_in_our_words(g_fuse_said);
      if (why.find("(try --help)") == std::string::npos) why += " (try --help)";
      return fail(why);
    }
  }
  if (raw.help) {
    result.outcome = MountCommandLine::Outcome::kHelp;
    return result;
  }
  if (raw.version) {
    result.outcome = MountCommandLine::Outcome::kVersion;
    return result;
  }
  if (!raw.source) return fail(std::string("missing SOURCE and MOUNTPOINT (") + kUsage + "; try --help)");
  if (!raw.mountpoint) return fail(std::string("missing MOUNTPOINT (") + kUsage + "; try --help)");
  if (raw.stray)
    return fail(std::string("unexpected argument '") + raw.stray + "' after SOURCE and MOUNTPOINT (try --help)");

  fs::FilesystemOptions& o = options->fs;
  if (raw.threads) {
    const auto n = base::parse_threads(raw.threads);
    if (!n) return fail(bad("threads", base::not_a_thread_count(raw.threads)));
    o.threads = *n;
  }
  if (raw.cache_size) {
    const auto bytes = base::parse_size(raw.cache_size);
    if (!bytes) return fail(bad("cache_size", base::not_a_size(raw.cache_size)));
    std::string warning;
    if (std::string why = base::check_cache_size(*bytes, base::physical_memory(), &warning); !why.empty())
      return fail(bad("cache_size", why));
    if (!warning.empty()) result.warnings.push_back(bad("cache_size", warning));
    o.cache_size = *bytes;
  }
  if (raw.index) {
    if (!*raw.index) return fail(bad("index", "needs a path or a URL"));
    o.named_index = io::is_url(raw.index) ? std::string(raw.index) : io::absolute_path(raw.index);
  }
  if (raw.index_dir) {
    if (!*raw.index_dir) return fail(bad("index_dir", "needs a directory"));
    o.index_dir = index::named_index_dir(raw.index_dir);  // a symlink stays one: refused
  }
  if (raw.log_level) {
    bool known = false;
    for (const char* l : kLogLevels) known = known || std::strcmp(l, raw.log_level) == 0;
    if (!known)
      return fail(bad("log_level", std::string("'") + raw.log_level +
                                       "' is not one of trace, debug, info, warn, error, critical, off"));
    options->log_level = std::strcmp(raw.log_level, "warning") == 0 ? "warn" : raw.log_level;
  }
  if (raw.max_threads) {
    const auto n = base::parse_threads(raw.max_threads);
    if (!n) return fail(bad("max_threads", base::not_a_thread_count(raw.max_threads)));
    options->max_fuse_threads = *n;
  }
  if (raw.max_idle_threads) {
    const auto n = base::parse_threads(raw.max_idle_threads);
    if (!n) return fail(bad("max_idle_threads", base::not_a_thread_count(raw.max_idle_threads)));
    options->max_idle_fuse_threads = *n;
  } else {
    options->max_idle_fuse_threads = options->max_fuse_threads;
  }
  options->wait_index = raw.wait_index != 0;
  // A URL is kept as given (its object is requested as written); a path is made absolute.
  o.source = io::is_url(raw.source) ? std::string(raw.source) : io::absolute_path(raw.source);
  o.mountpoint = io::absolute_path(raw.mountpoint);
  options->foreground = cmd.foreground != 0;
  options->debug = cmd.debug != 0;
  options->single_thread = cmd.singlethread != 0;
  options->clone_fd = cmd.clone_fd != 0;
  if (options->debug && !raw.log_level) options->log_level = "debug";

  // Always read-only; permissions are checked by the kernel against the mirrored modes. The
  // source path is escaped: a comma in it would otherwise split the option list.
  char* fixed = nullptr;
  fuse_opt_add_opt(&fixed, "ro");
  fuse_opt_add_opt(&fixed, "default_permissions");
  // /proc/mounts is world-readable: a URL is shown there without its secrets.
  fuse_opt_add_opt_escaped(&fixed, ("fsname=" + io::redacted_url(o.source)).c_str());
  fuse_opt_add_opt(&fixed, "subtype=mibz2fs");
  fuse_opt_add_arg(args, "-o");
  fuse_opt_add_arg(args, fixed);
  std::free(fixed);
  result.outcome = MountCommandLine::Outcome::kMount;
  return result;
}

std::string mount_help() {
  char text[4096];
  std::snprintf(
      text, sizeof text,
      "%s\n"
      "\n"
      "Mounts the directory SOURCE read-only at MOUNTPOINT, showing every bzip2 file in it as its\n"
      "decompressed content: X.bz2 as X, X.tbz2 and X.tbz as X.tar. Unmount with fusermount3 -u.\n"
      "SOURCE may be a URL: http(s)://HOST/PATH/X.bz2 or s3://BUCKET/KEY (one object, shown as X),\n"
      "or s3://BUCKET/PREFIX/ (the objects under it, as a tree); see REMOTE SOURCES in mibz2fs(1).\n"
      "\n"
      "Options (-o takes a comma-separated list, as the options column of /etc/fstab):\n"
      "    -o threads=N           decoder threads, 1 to 1024 (default: its CPUs, %u here)\n"
      "    -o cache_size=SIZE     decoded-block cache, at least 1M (default: 1G, or a quarter of\n"
      "                           the memory if that is less: %s here)\n"
      "    -o index=INDEX         the index of a URL's one object, a path or a URL, instead of\n"
      "                           its sidecar (checked on a sample of blocks before use)\n"
      "    -o index_dir=DIR       where block indexes are kept (default: $XDG_CACHE_HOME/mibz2fs;\n"
      "                           as root /var/cache/mibz2fs; else ~/.cache/mibz2fs)\n"
      "    -o wait_index          index every file before the mount appears (with progress)\n"
      "    -o log_level=LEVEL     trace, debug, info, warn (or warning), error, critical or off\n"
      "                           (default: info; debug with -d)\n"
      "    -o allow_other         let every user read the mount (a user other than root needs\n"
      "                           user_allow_other in /etc/fuse.conf)\n"
      "    -o allow_root          let root read the mount too\n"
      "    -o auto_unmount        unmount when mibz2fs ends, even when it is killed\n"
      "    -o max_threads=N       FUSE request threads at most, 1 to 1024 (default: %u)\n"
      "    -o max_idle_threads=N  idle FUSE request threads kept, 1 to 1024 (default: max_threads)\n"
      "    -o clone_fd            a /dev/fuse descriptor of its own for each request thread\n"
      "    -o OPTION              generic mount options (nosuid, nodev, noexec, noatime, ...);\n"
      "                           the mount is always ro and default_permissions\n"
      "    -f                     stay in the foreground and log to stderr (otherwise: syslog)\n"
      "    -d, -o debug           debug: -f, log_level=debug, and every FUSE request logged\n"
      "    -s                     serve FUSE requests on a single thread\n"
      "    -h, --help             this help\n"
      "    -V, --version          print the version\n"
      "\n"
      "SIZE is a number of bytes, or a number with K, M, G or T (powers of 1024; KiB and KB mean\n"
      "the same) such as 512M or 1.5G; a fraction needs a unit and is rounded down to whole bytes.\n",
      kUsage, engine::default_decoder_threads(), base::human_bytes(engine::default_cache_size()).c_str(),
      fs::default_fuse_loop().max_threads);
  return text;
}

std::string mount_version() {
  return std::string("mibz2fs ") + MIBZ2FS_VERSION + "\nFUSE library version " + fuse_pkgversion() + "\n";
}

namespace {

std::string check_mountpoint(const std::string& mountpoint) {
  struct stat st;
  if (stat(mountpoint.c_str(), &st) != 0) return "MOUNTPOINT " + mountpoint + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return "MOUNTPOINT " + mountpoint + " is not a directory";
  // Refuse to stack a second mount on a mount point.
  if (io::is_mount_point(mountpoint)) return "MOUNTPOINT " + mountpoint + " is already mounted";
  return {};
}

}  // namespace

std::string check_mount_paths(const MountOptions& options) {
  const std::string& source = options.fs.source;
  const std::string& mountpoint = options.fs.mountpoint;
  struct stat st;
  // A named index is one file's: a mount of one object has one file.
  if (!options.fs.named_index.empty()) {
    const base::Result<io::SourceUrl> url = io::parse_source_url(source);
    if (!io::is_url(source) || !url.ok() || url->is_prefix())
      return "-o index= is for a SOURCE that is the URL of one object";
  }
  if (io::is_url(source)) return check_mountpoint(mountpoint);
  if (stat(source.c_str(), &st) != 0) return "SOURCE " + source + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return "SOURCE " + source + " is not a directory";
  if (access(source.c_str(), R_OK | X_OK) != 0) return "SOURCE " + source + ": " + std::strerror(errno);
  if (std::string problem = check_mountpoint(mountpoint); !problem.empty()) return problem;
  if (source == mountpoint) return "SOURCE and MOUNTPOINT are the same directory";
  // A mount inside its own source would list itself (and its lookups would call into itself).
  if (mountpoint.rfind(source + "/", 0) == 0) return "MOUNTPOINT " + mountpoint + " is inside SOURCE " + source;
  // A source inside its own mount would be hidden by it, and every lookup would wait on itself.
  if (source.rfind(mountpoint == "/" ? "/" : mountpoint + "/", 0) == 0)
    return "SOURCE " + source + " is inside MOUNTPOINT " + mountpoint;
  return {};
}

}  // namespace mibz2::programs
