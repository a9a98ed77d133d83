// Helpers for the tests of the Catalog (on top of index_test_support.h): a file's index obtained
// through a fresh engine and catalog, under a watchdog, as mibz2 obtains it.
#pragma once

#include <memory>
#include <string>

#include "engine/catalog.h"
#include "engine/engine.h"
#include "index/index_store.h"
#include "index_test_support.h"
#include "io/paths.h"

namespace mibz2::test {

// The index of `path` (made absolute) through a new Engine of `threads` decoders and a Catalog on
// `store`: loaded if current, else built (`rebuild`: built anyway). If it does not settle within
// kBuildTimeout the test program aborts with a message rather than hang the suite.
engine::IndexStatus obtain_guarded(const std::string& path, index::IndexStore& store, unsigned threads,
                                   bool rebuild = false);

// Waits for `file` to settle, or aborts the test program after kBuildTimeout.
void settle_guarded(engine::Catalog& catalog, const engine::FileRef& file);

// Catalog::open's Reader for `file`; null, with a test failure that says why, when there is none.
std::shared_ptr<engine::Reader> reader_of(engine::Catalog& catalog, const engine::FileRef& file);

}  // namespace mibz2::test
