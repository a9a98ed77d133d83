// Reading and writing index files (index/FORMAT.md). Parsing validates everything and never trusts
// a field it has not checked; the only per-record work is one linear pass.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "index/block_index.h"

namespace mibz2::index {

inline constexpr uint32_t kFormatVersion = 2;
inline constexpr size_t kHeaderSize = 128;

// The index file's bytes.
std::vector<uint8_t> serialize(const BlockIndex& index);

// Parses and validates `bytes` (structure, checksum, record sanity; not the source identity).
// Returns the index, or EBADMSG with what is wrong ("checksum mismatch", "format version 1,
// expected 2", ...).
base::Result<BlockIndex> parse(std::span<const uint8_t> bytes);

}  // namespace mibz2::index
