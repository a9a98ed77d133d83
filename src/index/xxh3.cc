#include "index/xxh3.h"

#include <new>

#include <xxhash.h>

namespace mibz2::index {

Xxh3::Xxh3() : state_(XXH3_createState()) {
  if (!state_) throw std::bad_alloc();
  XXH3_64bits_reset(static_cast<XXH3_state_t*>(state_));
}

Xxh3::~Xxh3() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }

void Xxh3::update(const void* data, size_t size) { XXH3_64bits_update(static_cast<XXH3_state_t*>(state_), data, size); }

uint64_t Xxh3::digest() const { return XXH3_64bits_digest(static_cast<const XXH3_state_t*>(state_)); }

uint64_t xxh3(const void* data, size_t size) { return XXH3_64bits(data, size); }

}  // namespace mibz2::index
