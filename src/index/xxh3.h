// XXH3-64 (xxHash 0.8, Debian's libxxhash): the hash of index files' checksums, of source
// fingerprints and of index file names. A documented, stable hash, so that every machine sharing an
// index directory computes the same values (FORMAT.md).
#pragma once

#include <cstddef>
#include <cstdint>

namespace mibz2::index {

// XXH3-64 of the concatenation of the pieces given to update(), seed 0.
class Xxh3 {
 public:
  Xxh3();
  ~Xxh3();
  Xxh3(const Xxh3&) = delete;
  Xxh3& operator=(const Xxh3&) = delete;
  void update(const void* data, size_t size);
  uint64_t digest() const;

 private:
  void* state_;  // XXH3_state_t
};

// XXH3-64 of one buffer, seed 0.
uint64_t xxh3(const void* data, size_t size);

}  // namespace mibz2::index
