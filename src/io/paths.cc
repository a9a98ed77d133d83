#include "io/paths.h"

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace mibz2::io {

std::string absolute_path(const std::string& path) {
  char buf[PATH_MAX];
  if (realpath(path.c_str(), buf)) return buf;
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.string();
}

}  // namespace mibz2::io
