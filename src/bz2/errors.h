// Error reporting of the format layer: a small code plus the bit offset where it was found.
// No exceptions, no logging, no errno inside the codec (see libdeflate's SAFETY_CHECK style):
// callers above turn an Error into a message naming the file and block.
#pragma once

#include <cstdint>
#include <string>

namespace mibz2::bz2 {

enum class ErrorCode : uint8_t {
  kOk = 0,
  kTruncated,            // input ended inside a block or header
  kBadStreamHeader,      // not "BZh1".."BZh9"
  kBadBlockMagic,        // neither a block magic nor the end-of-stream marker where one must be
  kBadOrigPtr,           // origPtr not below the block length
  kNoSymbolsInUse,       // symbol bitmap is empty
  kBadTableCount,        // number of Huffman tables outside 2..6
  kBadSelectorCount,     // zero selectors
  kBadSelector,          // a selector names a table that does not exist
  kBadCodeLength,        // a code length outside 1..20
  kBadHuffmanCode,       // a bit pattern that no code of the table matches
  kTooManySelectorsUsed, // symbols continue past the last selector
  kBlockTooLong,         // more symbols than the stream's level allows
  kRunTooLong,           // a RUNA/RUNB run length beyond any legal value
  kBadBwtCycle,          // the inverse BWT table does not fit the block (counts, origin)
  kBlockCrcMismatch,     // decoded bytes do not match the block CRC
  kStreamCrcMismatch,    // combined CRC at the end of a stream does not match
  kUnfinishedRun,        // the block ends after four equal bytes, before their RLE1 count byte
};

// What went wrong and where. bit_offset is absolute in the input given to the codec.
struct Error {
  ErrorCode code = ErrorCode::kOk;
  uint64_t bit_offset = 0;

  explicit operator bool() const { return code != ErrorCode::kOk; }
};

// A short human phrase for a code ("bad Huffman code").
const char* describe(ErrorCode code);

// "bad Huffman code at bit 123456 (byte 15432 + 0)".
std::string to_string(const Error& error);

}  // namespace mibz2::bz2
