// The JSON object `mibz2 info --json` prints for one file: the fields of its report
// (catalog/file_report.h), which the Python module's mibz2.info() gives as a dict.
#pragma once

#include <string>

#include "catalog/file_report.h"

namespace mibz2::programs {

// One line of JSON (no newline).
std::string info_json(const catalog::FileReport& report);

}  // namespace mibz2::programs
