// The JSON object `mibz2 info --json` prints for one file: what its index says (sizes, lines,
// streams, blocks, damage) and where the index is. One function, so that the Python module's
// mibz2.info() gives the very same object.
#pragma once

#include <string>

#include "catalog/catalog_report.h"

namespace mibz2::programs {

// One line of JSON (no newline) for the file `path` whose index is ready in `got`.
std::string info_json(const std::string& path, const catalog::IndexStatus& got);
// The words of the "state" field ("current", "built now", ...): how the index came to be.
const char* index_state(const catalog::IndexOrigin& origin);

}  // namespace mibz2::programs
