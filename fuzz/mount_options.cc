// Fuzz target: mibz2fs's command line and -o options (parse_mount_options: fuse_opt, our values,
// libfuse's own options).
//
// Input: arguments separated by NUL bytes (at most 32), given after argv[0] = "mibz2fs". Seeds:
// command lines with every option of ours and some of libfuse's (fuzz/make_seeds.cc).
//
// Checked: no crash, leak or undefined behaviour on any command line (the sanitizers); a command
// line that mounts has only values in range, and both paths absolute if check_mount_paths lets
// the mount go ahead; FUSE's arguments always end with the options mibz2fs imposes (read-only).
// What parse prints (usage, errors) goes to /dev/null.
//
// fuzz-args: -dict=options.dict -max_len=512
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "programs/mount_options.h"

namespace {

constexpr size_t kMaxArgs = 32;

// glibc's stdout and stderr are plain variables: pointing them at /dev/null silences what parse and
// libfuse print, while libFuzzer (its own FILE*, taken at start) and the sanitizers (fd 2) still
// report.
class Silence {
 public:
  Silence() {
    static FILE* null = std::fopen("/dev/null", "w");
    FUZZ_CHECK(null != nullptr, "cannot open /dev/null");
    out_ = stdout;
    err_ = stderr;
    stdout = null;
    stderr = null;
  }
  ~Silence() {
    std::fflush(stdout);
    std::fflush(stderr);
    stdout = out_;
    stderr = err_;
  }

 private:
  FILE* out_;
  FILE* err_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t size) {
  using namespace mibz2;
  std::vector<std::string> words{"mibz2fs"};
  std::string word;
  for (size_t i = 0; i < size && words.size() <= kMaxArgs; ++i) {
    if (input[i] == 0) {
      words.push_back(std::move(word));
      word.clear();
    } else {
      word.push_back(static_cast<char>(input[i]));
    }
  }
  if (!word.empty() && words.size() <= kMaxArgs) words.push_back(std::move(word));
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);

  programs::MountOptions options;
  fuse_args args{};
  programs::MountCommandLine parsed;
  {
    Silence quiet;
    parsed = programs::parse_mount_options(static_cast<int>(words.size()), argv.data(), &options, &args);
  }
  if (parsed.outcome == programs::MountCommandLine::Outcome::kError)
    FUZZ_CHECK(!parsed.error.empty() && parsed.error.find('\n') == std::string::npos,
               "an error that is not one line: '" + parsed.error + "'");
  if (parsed.outcome == programs::MountCommandLine::Outcome::kMount) {
    // What mibz2fs checks next; a mount that would go ahead has both paths absolute (the daemon
    // changes directory to / when it detaches).
    if (programs::check_mount_paths(options).empty())
      FUZZ_CHECK(options.fs.source.starts_with('/') && options.fs.mountpoint.starts_with('/'),
                 "a mount with a relative path: '" + options.fs.source + "' '" + options.fs.mountpoint + "'");
    FUZZ_CHECK(options.fs.threads <= 1024, "threads " + std::to_string(options.fs.threads));
    static const char* kLevels[] = {"trace", "debug", "info", "warn", "warning", "error", "critical", "off"};
    bool known = false;
    for (const char* l : kLevels) known = known || options.log_level == l;
    FUZZ_CHECK(known, "log level '" + options.log_level + "'");
    FUZZ_CHECK(args.argc >= 2 && std::string(args.argv[args.argc - 1]).rfind("ro,default_permissions,", 0) == 0,
               "the read-only options are not last");
  }
  fuse_opt_free_args(&args);
  return 0;
}
