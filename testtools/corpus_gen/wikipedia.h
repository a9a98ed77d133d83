// A Wikipedia-like MediaWiki XML export: <mediawiki>, <siteinfo>, then <page>s with one wikitext
// revision each.
#pragma once

#include <cstdint>

#include "model.h"
#include "sink.h"

namespace mibz2::corpus {

// Writes exactly `size` bytes; false when writing failed.
bool write_wikipedia(const Model& m, uint64_t seed, uint64_t size, Sink& out);

}  // namespace mibz2::corpus
