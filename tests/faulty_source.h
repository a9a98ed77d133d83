// A source directory whose reads fail: mibz2-latency-fs (testtools/latency_fs.cc) serving a
// directory with every read that overlaps bytes [from, to) of any file failing with EIO while the
// fault is on, as a flaky disk or remote storage that fails a range looks to mibz2fs and mibz2.
// The fault is switched by a file outside the mount (fail_while), without unmounting.
//
// Stop it after whatever reads through it (a mibz2fs mounted over it keeps descriptors open).
#pragma once

#include <cstdint>
#include <string>

#include "mount_harness.h"

namespace mibz2::test {

class FaultySource {
 public:
  // Serves `raw` at `mnt` (made if missing), with no delay, the fault off; its log goes to `log`.
  // `switch_file` turns the fault on while it exists.
  FaultySource(const stdfs::path& raw, const stdfs::path& mnt, const stdfs::path& switch_file, uint64_t from,
               uint64_t to, const stdfs::path& log);

  // "" once mounted, or why not.
  std::string wait_mounted() { return daemon_.wait_mounted(); }
  void fail(bool on);
  const stdfs::path& mnt() const { return daemon_.mnt(); }
  const stdfs::path& log() const { return daemon_.log(); }
  // Unmounts and reaps it; false if it had to be killed.
  bool stop() { return daemon_.stop(); }

 private:
  stdfs::path switch_;
  Mibz2fs daemon_;  // a FUSE daemon child, which is what the harness's Mibz2fs runs
};

}  // namespace mibz2::test
