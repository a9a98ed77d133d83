#include "catalog/catalog_report.h"

#include <cstdio>

#include <spdlog/spdlog.h>

namespace mibz2::catalog {

const char* to_string(IndexState state) {
  switch (state) {
    case IndexState::kUnknown: return "unknown";
    case IndexState::kLoading: return "loading";
    case IndexState::kQueued: return "queued";
    case IndexState::kBuilding: return "building";
    case IndexState::kReady: return "ready";
    case IndexState::kFailed: return "failed";
    case IndexState::kStale: return "stale";
  }
  return "?";
}

std::string IndexStatus::describe() const {
  switch (state) {
    case IndexState::kReady: return "ready";
    case IndexState::kFailed: return "failed: " + error.message();
    case IndexState::kBuilding:
      return "building " + std::to_string(build_total ? 100 * build_done / build_total : 0) + "%";
    case IndexState::kUnknown:
    case IndexState::kStale:
    case IndexState::kLoading:
    case IndexState::kQueued: return "queued";
  }
  return "?";
}

std::string CatalogSummary::describe() const {
  char buf[384];
  std::snprintf(buf, sizeof buf,
                "files_ready=%llu files_building=%llu files_queued=%llu files_failed=%llu bytes_done=%llu "
                "bytes_to_do=%llu rate_bytes_per_s=%.0f eta_s=%s",
                static_cast<unsigned long long>(ready), static_cast<unsigned long long>(building),
                static_cast<unsigned long long>(queued), static_cast<unsigned long long>(failed),
                static_cast<unsigned long long>(bytes_done), static_cast<unsigned long long>(bytes_to_do), rate(),
                eta() < 0 ? "unknown" : std::to_string(static_cast<unsigned long long>(eta() + 0.5)).c_str());
  return buf;
}

std::string CatalogSummary::counters() const {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "indexes_built=%llu indexes_loaded=%llu index_failures=%llu bytes_indexed=%llu "
                "index_blocks_decoded=%llu index_seconds=%.1f",
                static_cast<unsigned long long>(built), static_cast<unsigned long long>(loaded),
                static_cast<unsigned long long>(failures), static_cast<unsigned long long>(bytes_indexed),
                static_cast<unsigned long long>(blocks_decoded), build_seconds);
  return buf;
}

void log_damage(const std::string& path, const index::BlockIndex& index) {
  if (index.trailing_bytes)
    spdlog::info("{}: {} bytes of trailing garbage after the last stream are ignored (as bzip2 does)", path,
                 index.trailing_bytes);
  if (!index.damaged_blocks) return;
  constexpr size_t kShown = 8;  // a file with thousands of damaged blocks still gets one line
  const std::vector<std::string> report = index::damage_report(index);
  std::string line;
  for (size_t i = 0; i < report.size() && i < kShown; ++i) line += (i ? " | " : "") + report[i];
  if (report.size() > kShown) line += " | and " + std::to_string(report.size() - kShown) + " more (mibz2 info)";
  spdlog::warn("{}: damaged, {} {} read as I/O errors: {}", path, index.damaged_blocks,
               index.damaged_blocks == 1 ? "block" : "blocks", line);
}

}  // namespace mibz2::catalog
