// The programs' command-line rules without running a program or mounting: sizes, thread counts,
// the cache size limits and words (base/settings.h, base/words.h), and mibz2fs's options (programs/mount_options.h)
// parsed as a shell and /etc/fstab give them.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "base/settings.h"
#include "base/words.h"
#include "engine/decoder_pool.h"
#include "programs/cli_common.h"
#include "programs/mount_options.h"
#include "programs/progress_line.h"
#include "test_support.h"

namespace mibz2::programs {
namespace {

constexpr uint64_t kKi = 1024, kMi = kKi * 1024, kGi = kMi * 1024, kTi = kGi * 1024;

// --- sizes ---

TEST(SizeRule, WholeBytesAndUnitsOfPowersOf1024) {
  struct Case {
    const char* text;
    uint64_t bytes;
  };
  const Case cases[] = {
      {"0", 0},          {"4096", 4096},      {"100B", 100},       {"64K", 64 * kKi},      {"64k", 64 * kKi},
      {"64KiB", 64 * kKi}, {"64KB", 64 * kKi}, {"64kb", 64 * kKi}, {"1M", kMi},            {"2G", 2 * kGi},
      {"3T", 3 * kTi},   {"1.5K", 1536},      {"1.5G", kGi + kGi / 2}, {"0.5M", kMi / 2},
      {"0.3K", 307},  // rounded down to whole bytes
      {"0.0001K", 0}, {"007", 7},
      {"18446744073709551615", UINT64_MAX}, {"16777215.999999T", 16777215 * kTi + 1099510528264},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const auto got = base::parse_size(c.text);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(*got, c.bytes);
  }
}

TEST(SizeRule, RejectsWhatIsNotASize) {
  for (const char* text : {"", "abc", "-5M", "+5", "-0", "1.5", "100.5", "1.", ".5K", "1..5K", "5X", "5KK", "5 K",
                           " 5", "5 ", "1e3", "0x10", "K", "5iB", "5Bi", "18446744073709551616", "16777216T",
                           "99999999999999999999999"}) {
    SCOPED_TRACE(std::string("'") + text + "'");
    EXPECT_FALSE(base::parse_size(text).has_value());
  }
}

TEST(SizeRule, OneWordingForABadSize) {
  EXPECT_EQ(base::not_a_size("12X"), "'12X' is not a size (bytes, or a number with K, M, G or T: 4096, 64K, 1.5G)");
}

// --- thread counts ---

TEST(ThreadRule, OneTo1024InDecimalDigits) {
  EXPECT_EQ(base::parse_threads("1"), 1u);
  EXPECT_EQ(base::parse_threads("8"), 8u);
  EXPECT_EQ(base::parse_threads("1024"), 1024u);
  EXPECT_EQ(base::parse_threads("0016"), 16u);
  for (const char* text : {"", "0", "1025", "-1", "+2", "abc", "1.5", " 2", "2 ", "10000", "4294967297", "2k"}) {
    SCOPED_TRACE(std::string("'") + text + "'");
    EXPECT_FALSE(base::parse_threads(text).has_value());
  }
  EXPECT_EQ(base::not_a_thread_count("0"), "'0' is not a thread count (1 to 1024)");
}

TEST(ThreadRule, TheDefaultIsTheCpusThisProcessMayUse) {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  ASSERT_EQ(sched_getaffinity(0, sizeof cpus, &cpus), 0);
  EXPECT_EQ(engine::default_decoder_threads(), static_cast<unsigned>(CPU_COUNT(&cpus)));
  // Narrowed to one CPU (as taskset does), the default follows.
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int i = 0; i < CPU_SETSIZE; ++i)
    if (CPU_ISSET(i, &cpus)) {
      CPU_SET(i, &one);
      break;
    }
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  EXPECT_EQ(engine::default_decoder_threads(), 1u);
  ASSERT_EQ(sched_setaffinity(0, sizeof cpus, &cpus), 0);
}

// --- the cache size ---

// --- the progress line ---

// Never wider than the terminal, for every width from 40 to 200 columns, long and short labels,
// every stage of a build and absurd figures; the percentage is always there, and the label keeps
// its end (the file name); what is left out on narrow terminals goes in a fixed order.
TEST(ProgressLine, FitsEveryWidthFrom40To200) {
  const std::string long_label = "indexing /srv/dumps/wikidata/20261101/" + std::string(150, 'x') + "/latest-all.json.bz2";
  const ProgressFigures figures[] = {
      {"indexing a.bz2", 0, 1000, 0},
      {"indexing a.bz2", 500, 1000, 1.5},
      {long_label, 42ull << 30, 96ull << 30, 300},
      {long_label, 96ull << 30, 96ull << 30, 1e6},
      {"total: 123456/123456 files", UINT64_MAX / 2, UINT64_MAX, 1e-9},
      {"", 1, 3, 1},
  };
  for (const ProgressFigures& f : figures) {
    for (size_t width = 40; width <= 200; ++width) {
      SCOPED_TRACE(f.label.substr(0, 30) + " at " + std::to_string(width));
      const std::string line = progress_line(f, width);
      EXPECT_LE(line.size(), width) << line;
      EXPECT_NE(line.find('%'), std::string::npos) << line;
      EXPECT_EQ(line.find('\n'), std::string::npos);
      EXPECT_EQ(line.find('\r'), std::string::npos);
      if (f.label == long_label) {
        EXPECT_NE(line.find(".bz2"), std::string::npos) << "the file name is kept: " << line;
      }
      if (width >= 80) {
        EXPECT_NE(line.find('['), std::string::npos) << "a bar at 80 columns: " << line;
        EXPECT_NE(line.find("ETA"), std::string::npos) << line;
      }
    }
  }
  // Wide enough, everything is said.
  const std::string wide = progress_line({"indexing a.bz2", 512 << 20, 1 << 30, 4}, 120);
  EXPECT_EQ(wide.rfind("indexing a.bz2 [", 0), 0u) << wide;
  EXPECT_NE(wide.find(" 50% 512.0 MiB / 1.0 GiB  134 MB/s  ETA 0:04"), std::string::npos) << wide;
  // The bar fills with the progress.
  const std::string half = progress_line({"x", 1, 2, 1}, 80);
  const size_t open = half.find('['), close = half.find(']');
  ASSERT_NE(close, std::string::npos);
  const std::string bar = half.substr(open + 1, close - open - 1);
  EXPECT_EQ(std::count(bar.begin(), bar.end(), '='), static_cast<long>(bar.size() / 2)) << half;
}

TEST(ProgressLine, TheTerminalWidthFallsBackOnColumnsThen80) {
  // Not a terminal: $COLUMNS if it is a number, else 80.
  const int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const char* was = std::getenv("COLUMNS");
  const std::string saved = was ? was : "";
  setenv("COLUMNS", "132", 1);
  EXPECT_EQ(terminal_width(fd), 132u);
  setenv("COLUMNS", "wide", 1);
  EXPECT_EQ(terminal_width(fd), 80u);
  unsetenv("COLUMNS");
  EXPECT_EQ(terminal_width(fd), 80u);
  if (was) setenv("COLUMNS", saved.c_str(), 1);
  close(fd);
}

TEST(CacheSize, AtLeastOneMebibyteAndAWarningAboveMemory) {
  std::string warning = "stale";
  EXPECT_EQ(base::check_cache_size(0, 8 * kGi, &warning), "0 B is too small for a cache: the least is 1M");
  EXPECT_EQ(base::check_cache_size(100, 8 * kGi, &warning), "100 B is too small for a cache: the least is 1M");
  EXPECT_FALSE(base::check_cache_size(kMi - 1, 8 * kGi, &warning).empty());
  EXPECT_EQ(base::check_cache_size(kMi, 8 * kGi, &warning), "");
  EXPECT_EQ(warning, "");
  EXPECT_EQ(base::check_cache_size(8 * kGi, 8 * kGi, &warning), "");
  EXPECT_EQ(warning, "");
  EXPECT_EQ(base::check_cache_size(kTi, 8 * kGi, &warning), "");
  EXPECT_EQ(warning, "1.0 TiB is more than this machine's memory (8.0 GiB): a cache that fills it makes the machine swap");
  EXPECT_EQ(base::check_cache_size(kTi, 0, &warning), "");  // memory unknown: no warning
  EXPECT_EQ(warning, "");
  EXPECT_GT(base::physical_memory(), kMi);
}

// --- words ---

TEST(Words, PluralsAndSizes) {
  EXPECT_EQ(base::plural(0, "block"), "0 blocks");
  EXPECT_EQ(base::plural(1, "block"), "1 block");
  EXPECT_EQ(base::plural(2, "stream"), "2 streams");
  EXPECT_EQ(base::plural(1, "damaged block"), "1 damaged block");
  EXPECT_EQ(base::human_bytes(512), "512 B");
  EXPECT_EQ(base::human_bytes(1536), "1.5 KiB");
  EXPECT_EQ(base::human_bytes(kGi), "1.0 GiB");
}

// --- mibz2fs's options ---

struct Parsed {
  MountCommandLine result;
  MountOptions options;
  std::vector<std::string> fuse_args;  // what goes on to fuse_session_new (argv[0] first)
  std::string fuse_line() const {
    std::string s;
    for (const auto& a : fuse_args) s += a + ' ';
    return s;
  }
};

Parsed parse(std::vector<std::string> args) {
  args.insert(args.begin(), "mibz2fs");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  Parsed p;
  fuse_args fa;
  p.result = parse_mount_options(static_cast<int>(args.size()), argv.data(), &p.options, &fa);
  for (int i = 0; i < fa.argc; ++i) p.fuse_args.emplace_back(fa.argv[i]);
  fuse_opt_free_args(&fa);
  return p;
}

using Outcome = MountCommandLine::Outcome;

TEST(MountOptions, SourceAndMountpointAloneGiveTheDefaults) {
  const std::string cwd = std::filesystem::current_path().string();
  const Parsed p = parse({"dumps", "plain"});
  ASSERT_EQ(p.result.outcome, Outcome::kMount) << p.result.error;
  EXPECT_TRUE(p.result.warnings.empty());
  const MountOptions& o = p.options;
  EXPECT_EQ(o.fs.source, cwd + "/dumps");  // absolute, even when it does not exist (yet)
  EXPECT_EQ(o.fs.mountpoint, cwd + "/plain");
  EXPECT_EQ(o.fs.threads, 0u);
  EXPECT_EQ(o.fs.cache_size, 0u);
  EXPECT_EQ(o.fs.index_dir, "");
  EXPECT_FALSE(o.wait_index);
  EXPECT_EQ(o.log_level, "info");
  EXPECT_FALSE(o.foreground);
  EXPECT_FALSE(o.debug);
  EXPECT_FALSE(o.single_thread);
  EXPECT_FALSE(o.clone_fd);
  EXPECT_EQ(o.max_fuse_threads, 64u);
  // Request threads never end unless asked (ending them costs a thread per request under load).
  EXPECT_EQ(o.max_idle_fuse_threads, o.max_fuse_threads);
  // Only the options mibz2fs always adds go on to libfuse (fuse_parse_cmdline adds a subtype of
  // its own, which ours repeats); no positional does.
  EXPECT_EQ(p.fuse_line(), "mibz2fs -osubtype=mibz2fs -o ro,default_permissions,fsname=" + cwd +
                               "/dumps,subtype=mibz2fs ");
}

TEST(MountOptions, EveryOptionOfOurs) {
  const Parsed p = parse({"-o", "threads=4,cache_size=64M,index_dir=/srv/idx,wait_index,log_level=warning", "-o",
                          "max_threads=8,max_idle_threads=2,clone_fd", "-f", "-s", "/srv/dumps", "/mnt/plain"});
  ASSERT_EQ(p.result.outcome, Outcome::kMount) << p.result.error;
  const MountOptions& o = p.options;
  EXPECT_EQ(o.fs.source, "/srv/dumps");
  EXPECT_EQ(o.fs.mountpoint, "/mnt/plain");
  EXPECT_EQ(o.fs.threads, 4u);
  EXPECT_EQ(o.fs.cache_size, 64 * kMi);
  EXPECT_EQ(o.fs.index_dir, "/srv/idx");
  EXPECT_TRUE(o.wait_index);
  EXPECT_EQ(o.log_level, "warn");
  EXPECT_TRUE(o.foreground);
  EXPECT_TRUE(o.single_thread);
  EXPECT_TRUE(o.clone_fd);
  EXPECT_EQ(o.max_fuse_threads, 8u);
  EXPECT_EQ(o.max_idle_fuse_threads, 2u);
  EXPECT_EQ(p.fuse_line(), "mibz2fs -osubtype=mibz2fs -o ro,default_permissions,fsname=/srv/dumps,subtype=mibz2fs ")
      << "ours are not passed on";
}

TEST(MountOptions, IdleRequestThreadsFollowMaxThreadsUnlessGiven) {
  const Parsed p = parse({"-o", "max_threads=16", "/srv/dumps", "/mnt/plain"});
  ASSERT_EQ(p.result.outcome, Outcome::kMount) << p.result.error;
  EXPECT_EQ(p.options.max_fuse_threads, 16u);
  EXPECT_EQ(p.options.max_idle_fuse_threads, 16u);
}

TEST(MountOptions, FstabStyleAfterThePositionalsWithFuseOptionsPassedOn) {
  // mount.fuse3 runs "mibz2fs SOURCE MOUNTPOINT -o OPTIONS" with fstab's options column.
  const Parsed p = parse({"/srv/dumps", "/mnt/plain", "-o", "rw,allow_other,threads=2,noatime,index_dir=/srv/i,dev"});
  ASSERT_EQ(p.result.outcome, Outcome::kMount) << p.result.error;
  EXPECT_EQ(p.options.fs.threads, 2u);
  EXPECT_EQ(p.options.fs.index_dir, "/srv/i");
  const std::string line = p.fuse_line();
  for (const char* kept : {"allow_other", "noatime", "rw", "dev"})
    EXPECT_NE(line.find(kept), std::string::npos) << kept << " not passed on: " << line;
  EXPECT_EQ(line.find("threads"), std::string::npos) << line;
  EXPECT_EQ(line.find("index_dir"), std::string::npos) << line;
  // Ours come last, so ro wins over an rw from fstab.
  EXPECT_EQ(p.fuse_args.back(), "ro,default_permissions,fsname=/srv/dumps,subtype=mibz2fs");
}

TEST(MountOptions, TheLastOfARepeatedOptionWins) {
  const Parsed p = parse({"-o", "threads=2", "-o", "threads=3,threads=5", "a", "b"});
  ASSERT_EQ(p.result.outcome, Outcome::kMount) << p.result.error;
  EXPECT_EQ(p.options.fs.threads, 5u);
}

TEST(MountOptions, DebugMeansForegroundAndDebugLogsUnlessALevelIsGiven) {
  for (const auto& args : {std::vector<std::string>{"-d", "a", "b"}, std::vector<std::string>{"-o", "debug", "a", "b"}}) {
    const Parsed p = parse(args);
    ASSERT_EQ(p.result.outcome, Outcome::kMount) << p.result.error;
    EXPECT_TRUE(p.options.debug);
    EXPECT_TRUE(p.options.foreground);
    EXPECT_EQ(p.options.log_level, "debug");
    EXPECT_NE(p.fuse_line().find(args[0] == "-d" ? " -d " : "debug"), std::string::npos)
        << "passed on, for libfuse to log requests: " << p.fuse_line();
  }
  const Parsed p = parse({"-d", "-o", "log_level=error", "a", "b"});
  EXPECT_EQ(p.options.log_level, "error");
}

TEST(MountOptions, EveryLogLevelTheHelpLists) {
  for (const char* level : {"trace", "debug", "info", "warn", "error", "critical", "off"}) {
    const Parsed p = parse({"-o", std::string("log_level=") + level, "a", "b"});
    ASSERT_EQ(p.result.outcome, Outcome::kMount) << level << ": " << p.result.error;
    EXPECT_EQ(p.options.log_level, level);
    EXPECT_NE(mount_help().find(level), std::string::npos) << level;
  }
}

TEST(MountOptions, ACommaInSourceIsEscapedForTheOptionList) {
  const Parsed p = parse({"/srv/a,b", "/mnt/x"});
  ASSERT_EQ(p.result.outcome, Outcome::kMount) << p.result.error;
  EXPECT_EQ(p.options.fs.source, "/srv/a,b");
  EXPECT_EQ(p.fuse_args.back(), "ro,default_permissions,fsname=/srv/a\\,b,subtype=mibz2fs");
}

TEST(MountOptions, UnknownOptionsAreLeftForLibfuseToReject) {
  const Parsed p = parse({"-o", "threads=2,nonsense_option", "--nonsense", "a", "b"});
  ASSERT_EQ(p.result.outcome, Outcome::kMount) << p.result.error;
  EXPECT_NE(p.fuse_line().find("nonsense_option"), std::string::npos) << p.fuse_line();
  EXPECT_NE(p.fuse_line().find("--nonsense"), std::string::npos) << p.fuse_line();
  EXPECT_EQ(fuse_message_in_our_words("fuse: unknown option(s): `-o nonsense_option'\n"),
            "unknown option(s): '-o nonsense_option' (try --help)");
  EXPECT_EQ(fuse_message_in_our_words("fuse: mount failed: Permission denied\n"), "mount failed: Permission denied");
}

TEST(MountOptions, BadValuesAndArgumentsGiveOneLine) {
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  const std::string usage = "usage: mibz2fs [options] SOURCE MOUNTPOINT; try --help)";
  const std::vector<Case> cases = {
      {{"-o", "threads=0", "a", "b"}, "-o threads: '0' is not a thread count (1 to 1024)"},
      {{"-o", "threads=1025", "a", "b"}, "-o threads: '1025' is not a thread count (1 to 1024)"},
      {{"-o", "threads=abc", "a", "b"}, "-o threads: 'abc' is not a thread count (1 to 1024)"},
      {{"-o", "threads=", "a", "b"}, "-o threads: '' is not a thread count (1 to 1024)"},
      {{"-o", "cache_size=abc", "a", "b"}, "-o cache_size: " + base::not_a_size("abc")},
      {{"-o", "cache_size=-5M", "a", "b"}, "-o cache_size: " + base::not_a_size("-5M")},
      {{"-o", "cache_size=1.5", "a", "b"}, "-o cache_size: " + base::not_a_size("1.5")},
      {{"-o", "cache_size=0", "a", "b"}, "-o cache_size: 0 B is too small for a cache: the least is 1M"},
      {{"-o", "cache_size=100", "a", "b"}, "-o cache_size: 100 B is too small for a cache: the least is 1M"},
      {{"-o", "cache_size=1023K", "a", "b"}, "-o cache_size: 1023.0 KiB is too small for a cache: the least is 1M"},
      {{"-o", "log_level=loud", "a", "b"},
       "-o log_level: 'loud' is not one of trace, debug, info, warn, error, critical, off"},
      {{"-o", "index_dir=", "a", "b"}, "-o index_dir: needs a directory"},
      {{"-o", "max_threads=0", "a", "b"}, "-o max_threads: '0' is not a thread count (1 to 1024)"},
      {{"-o", "max_idle_threads=x", "a", "b"}, "-o max_idle_threads: 'x' is not a thread count (1 to 1024)"},
      {{}, "missing SOURCE and MOUNTPOINT (" + usage},
      {{"-f"}, "missing SOURCE and MOUNTPOINT (" + usage},
      {{"a"}, "missing MOUNTPOINT (" + usage},
      {{"a", "b", "c"}, "unexpected argument 'c' after SOURCE and MOUNTPOINT (try --help)"},
      {{"a", "b", "-o"}, "missing argument after '-o' (try --help)"},
      // Found by fuzz/mount_options.cc: an argument's newline or escape sequence was echoed as is.
      {{"a", "b", "c\nd"}, "unexpected argument 'c\\nd' after SOURCE and MOUNTPOINT (try --help)"},
      {{"-o", "log_level=\x1b[2J", "a", "b"},
       "-o log_level: '\\x1b[2J' is not one of trace, debug, info, warn, error, critical, off"},
  };
  for (const Case& c : cases) {
    std::string shown;
    for (const auto& a : c.args) shown += a + ' ';
    SCOPED_TRACE(shown);
    const Parsed p = parse(c.args);
    ASSERT_EQ(p.result.outcome, Outcome::kError);
    EXPECT_EQ(p.result.error, c.error);
    EXPECT_EQ(p.result.error.find('\n'), std::string::npos);
  }
}

TEST(MountOptions, ACacheAboveMemoryIsAcceptedWithAWarning) {
  const Parsed p = parse({"-o", "cache_size=16777215T", "a", "b"});
  ASSERT_EQ(p.result.outcome, Outcome::kMount) << p.result.error;
  EXPECT_EQ(p.options.fs.cache_size, 16777215 * kTi);
  ASSERT_EQ(p.result.warnings.size(), 1u);
  EXPECT_EQ(p.result.warnings[0].rfind("-o cache_size: 16.0 EiB is more than this machine's memory (", 0), 0u)
      << p.result.warnings[0];
  EXPECT_EQ(p.result.warnings[0].find('\n'), std::string::npos);
}

TEST(MountOptions, HelpAndVersionWhateverElseIsGiven) {
  for (const char* flag : {"-h", "--help"}) {
    EXPECT_EQ(parse({flag}).result.outcome, Outcome::kHelp);
    EXPECT_EQ(parse({"-o", "threads=0", flag, "a"}).result.outcome, Outcome::kHelp) << flag;
  }
  for (const char* flag : {"-V", "--version"}) {
    EXPECT_EQ(parse({flag}).result.outcome, Outcome::kVersion);
    EXPECT_EQ(parse({"a", "b", "c", flag}).result.outcome, Outcome::kVersion) << flag;
  }
  EXPECT_EQ(mount_version().rfind("mibz2fs ", 0), 0u);
  EXPECT_NE(mount_version().find("FUSE library version 3."), std::string::npos);
}

TEST(MountOptions, HelpListsEveryOptionOnce) {
  const std::string help = mount_help();
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = help.find(what); at != std::string::npos; at = help.find(what, at + 1)) ++n;
    return n;
  };
  for (const char* option : {"-o threads=N", "-o cache_size=SIZE", "-o index_dir=DIR", "-o wait_index",
                             "-o log_level=LEVEL", "-o allow_other", "-o allow_root", "-o auto_unmount",
                             "-o max_threads=N", "-o max_idle_threads=N", "-o clone_fd", "-f ", "-d, -o debug",
                             "-s ", "-h, --help", "-V, --version"})
    EXPECT_EQ(count(option), 1u) << option << " in:\n" << help;
  EXPECT_NE(help.find("K, M, G or T"), std::string::npos);
  EXPECT_NE(help.find("at least 1M"), std::string::npos);
  EXPECT_NE(help.find(std::to_string(engine::default_decoder_threads()) + " here"), std::string::npos);
  for (size_t start = 0, end; start < help.size(); start = end + 1) {
    end = help.find('\n', start);
    EXPECT_LE(end - start, 100u) << help.substr(start, end - start);
  }
}

// --- SOURCE and MOUNTPOINT on disk ---

TEST(MountPaths, ProblemsWithSourceAndMountpoint) {
  test::TempDir dir;
  const std::string src = dir.path() / "src", mnt = dir.path() / "mnt", file = dir.path() / "file";
  std::filesystem::create_directories(src + "/inner");
  std::filesystem::create_directories(mnt);
  test::write_file(file, {});
  auto problem = [](const std::string& s, const std::string& m) {
    MountOptions o;
    o.fs.source = s;
    o.fs.mountpoint = m;
    return check_mount_paths(o);
  };
  EXPECT_EQ(problem(src, mnt), "");
  EXPECT_EQ(problem(dir.path() / "missing", mnt), "SOURCE " + (dir.path() / "missing").string() + ": No such file or directory");
  EXPECT_EQ(problem(file, mnt), "SOURCE " + file + " is not a directory");
  EXPECT_EQ(problem(src, dir.path() / "missing"), "MOUNTPOINT " + (dir.path() / "missing").string() + ": No such file or directory");
  EXPECT_EQ(problem(src, file), "MOUNTPOINT " + file + " is not a directory");
  EXPECT_EQ(problem(src, src), "SOURCE and MOUNTPOINT are the same directory");
  EXPECT_EQ(problem(src, src + "/inner"), "MOUNTPOINT " + src + "/inner is inside SOURCE " + src);
  EXPECT_EQ(problem(src + "/inner", src), "SOURCE " + src + "/inner is inside MOUNTPOINT " + src);
  EXPECT_EQ(problem(src, "/proc"), "MOUNTPOINT /proc is already mounted");
}

}  // namespace
}  // namespace mibz2::programs
