// A Wikidata-like JSON dump: "[" on the first line, one entity per line ending in "," (except the
// last), "]" on the last line.
#pragma once

#include <cstdint>

#include "model.h"
#include "sink.h"

namespace mibz2::corpus {

// Writes exactly `size` bytes; false when writing failed.
bool write_wikidata(const Model& m, uint64_t seed, uint64_t size, Sink& out);

}  // namespace mibz2::corpus
