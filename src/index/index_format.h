// Reading and writing index files (index/FORMAT.md). Parsing validates everything and never trusts
// a field it has not checked; the only per-record work is one linear pass.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "index/block_index.h"
#include "io/mapped_file.h"

namespace mibz2::index {

// Written; version 2 (no line counts) is still read.
inline constexpr uint32_t kFormatVersion = 3;
inline constexpr size_t kHeaderSize = 128;
// What a block takes in an index file: its record and its newline count (version 3).
inline constexpr size_t kBytesPerBlock = sizeof(BlockRecord) + sizeof(uint32_t);

// The index file's bytes.
std::vector<uint8_t> serialize(const BlockIndex& index);

// Parses and validates `bytes` (structure, checksum, record sanity; not the source identity).
// Returns the index, or EBADMSG with what is wrong ("checksum mismatch", "format version 1,
// expected 3 (or 2)", ...). An index of version 2 has no line counts (has_line_counts() is false).
base::Result<BlockIndex> parse(std::span<const uint8_t> bytes);
// The same of a mapped index file: the index's columns are views into the mapping, not copies
// (BlockIndex::mapping holds it), so that every process that maps the file shares one copy. The
// checks read the mapped bytes; what a reader needs besides (they may change after the checks,
// io/mapped_file.h) is said where it reads them.
base::Result<BlockIndex> parse_mapped(std::shared_ptr<const io::MappedFile> file);

}  // namespace mibz2::index
