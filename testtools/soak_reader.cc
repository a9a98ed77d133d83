// One reader of scripts/soak: reads files of a mount, sequentially or at random offsets, until a
// deadline, and checks every byte it gets against the versions the file may hold.
//
//   mibz2-soak-reader seq|rand MOUNT ORIGINALS SECONDS SEED NAME...
//
// ORIGINALS/NAME.a and ORIGINALS/NAME.b are the two decompressed contents that the soak's mutator
// puts (compressed, whole, truncated or rewritten) at SOURCE/NAME.bz2, shown as MOUNT/NAME. Every
// read must return bytes of one version at that offset (a truncated source shows a prefix); the
// reads of one open file must all come from one version (never a mix of old and new bytes).
// Errors are counted, not failures: ENOENT, ESTALE, EIO and short files are what a file changing
// under the mount gives. A read or open that makes no progress for 120 s is a hang.
// Prints one line of counts; exit status 0, 1 for a wrong byte or a mix, 3 for a hang.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

std::atomic<int64_t> last_progress_ms{0};
std::atomic<const char*> doing{"start"};

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
}
void progress(const char* what) {
  doing.store(what);
  last_progress_ms.store(now_ms());
}

std::vector<uint8_t> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "soak-reader: cannot read %s\n", path.c_str());
    std::exit(2);
  }
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Counts {
  uint64_t opens = 0, reads = 0, bytes = 0, eof_early = 0;
  std::map<int, uint64_t> errors;  // errno -> count
  uint64_t wrong = 0, mixed = 0;
};

// Which versions `buf` (read at `off`) is a part of: bit 0 for a, bit 1 for b.
int matching(const std::vector<uint8_t>* v, uint64_t off, const uint8_t* buf, size_t n) {
  int m = 0;
  for (int i = 0; i < 2; ++i)
    if (off + n <= v[i].size() && std::memcmp(v[i].data() + off, buf, n) == 0) m |= 1 << i;
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr, "usage: mibz2-soak-reader seq|rand MOUNT ORIGINALS SECONDS SEED NAME...\n");
    return 2;
  }
  const bool sequential = std::strcmp(argv[1], "seq") == 0;
  const std::string mount = argv[2], originals = argv[3];
  const double seconds = std::atof(argv[4]);
  std::mt19937_64 rng(std::strtoull(argv[5], nullptr, 10));
  std::vector<std::string> names(argv + 6, argv + argc);
  std::map<std::string, std::vector<uint8_t>[2]> versions;
  for (const std::string& n : names) {
    versions[n][0] = slurp(originals + "/" + n + ".a");
    versions[n][1] = slurp(originals + "/" + n + ".b");
  }
  progress("start");
  std::thread([] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      if (now_ms() - last_progress_ms.load() > 120'000) {
        std::fprintf(stderr, "soak-reader: HUNG for 120 s in %s\n", doing.load());
        std::fflush(stderr);
        _exit(3);
      }
    }
  }).detach();

  Counts c;
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  std::vector<uint8_t> buf(1 << 20);
  while (Clock::now() < deadline) {
    const std::string& name = names[rng() % names.size()];
    const std::vector<uint8_t>* v = versions[name];
    const std::string path = mount + "/" + name;
    progress("open");
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    progress("after open");
    if (fd < 0) {
      ++c.errors[errno];
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    ++c.opens;
    int version = 3;  // the versions every read so far of this open file agrees with
    auto check = [&](uint64_t off, size_t n) {
      const int m = matching(v, off, buf.data(), n);
      if (m == 0) {
        ++c.wrong;
        std::fprintf(stderr, "soak-reader: WRONG bytes in %s at %llu (+%zu)\n", name.c_str(),
                     static_cast<unsigned long long>(off), n);
      } else if ((m & version) == 0) {
        ++c.mixed;
        std::fprintf(stderr, "soak-reader: MIXED versions in one open of %s at %llu (+%zu)\n", name.c_str(),
                     static_cast<unsigned long long>(off), n);
      } else {
        version &= m;
      }
    };
    if (sequential) {
      uint64_t off = 0;
      for (;;) {
        progress("sequential read");
        const ssize_t n = read(fd, buf.data(), buf.size());
        progress("after read");
        if (n < 0) {
          ++c.errors[errno];
          break;
        }
        if (n == 0) {
          if (off < v[0].size() && off < v[1].size()) ++c.eof_early;
          break;
        }
        ++c.reads;
        c.bytes += static_cast<uint64_t>(n);
        check(off, static_cast<size_t>(n));
        off += static_cast<uint64_t>(n);
        if (Clock::now() >= deadline) break;
      }
    } else {
      const uint64_t size = std::max(v[0].size(), v[1].size());
      for (int i = 0; i < 16; ++i) {
        const uint64_t off = rng() % (size + 1);
        const size_t len = 1 + rng() % (256 << 10);
        progress("random pread");
        const ssize_t n = pread(fd, buf.data(), len, static_cast<off_t>(off));
        progress("after pread");
        if (n < 0) {
          ++c.errors[errno];
          if (errno == ESTALE || errno == ENOENT) break;
          continue;
        }
        ++c.reads;
        c.bytes += static_cast<uint64_t>(n);
        if (n > 0) check(off, static_cast<size_t>(n));
      }
    }
    close(fd);
  }
  std::printf("%s opens=%llu reads=%llu bytes=%llu eof_early=%llu wrong=%llu mixed=%llu errors:", argv[1],
              static_cast<unsigned long long>(c.opens), static_cast<unsigned long long>(c.reads),
              static_cast<unsigned long long>(c.bytes), static_cast<unsigned long long>(c.eof_early),
              static_cast<unsigned long long>(c.wrong), static_cast<unsigned long long>(c.mixed));
  for (const auto& [e, n] : c.errors) std::printf(" %s=%llu", strerrorname_np(e) ? strerrorname_np(e) : "?", static_cast<unsigned long long>(n));
  std::printf("\n");
  return c.wrong || c.mixed ? 1 : 0;
}
