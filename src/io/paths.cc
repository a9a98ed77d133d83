#include "io/paths.h"

#include <climits>
#include <cstdlib>

namespace mibz2::io {

std::string absolute_path(const std::string& path) {
  char buf[PATH_MAX];
  if (realpath(path.c_str(), buf)) return buf;
  return path;
}

}  // namespace mibz2::io
