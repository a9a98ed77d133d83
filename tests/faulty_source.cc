#include "faulty_source.h"

#ifndef MIBZ2_LATENCY_FS_BINARY
#error "MIBZ2_LATENCY_FS_BINARY must name the mibz2-latency-fs program"
#endif

namespace mibz2::test {
namespace {

std::vector<std::string> latency_args(const stdfs::path& raw, const stdfs::path& mnt, const stdfs::path& switch_file,
                                      uint64_t from, uint64_t to) {
  stdfs::create_directories(mnt);
  return {"-f", "-o",
          "delay_ms=0,fail_from=" + std::to_string(from) + ",fail_to=" + std::to_string(to) +
              ",fail_while=" + switch_file.string(),
          raw.string(), mnt.string()};
}

}  // namespace

FaultySource::FaultySource(const stdfs::path& raw, const stdfs::path& mnt, const stdfs::path& switch_file,
                           uint64_t from, uint64_t to, const stdfs::path& log)
    : switch_(switch_file),
      daemon_(latency_args(raw, mnt, switch_file, from, to), mnt, log, std::nullopt, MIBZ2_LATENCY_FS_BINARY) {
  fail(false);
}

void FaultySource::fail(bool on) {
  if (on) {
    write_file(switch_, to_bytes("on"));
  } else {
    std::error_code ec;
    stdfs::remove(switch_, ec);
  }
}

}  // namespace mibz2::test
