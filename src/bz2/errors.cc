#include "bz2/errors.h"

#include <cstdio>

namespace mibz2::bz2 {

const char* describe(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "no error";
    case ErrorCode::kTruncated: return "input ends unexpectedly (truncated file)";
    case ErrorCode::kBadStreamHeader: return "not a bzip2 stream header";
    case ErrorCode::kBadBlockMagic: return "neither a block nor an end-of-stream marker";
    case ErrorCode::kBadOrigPtr: return "BWT origin pointer beyond the block length";
    case ErrorCode::kNoSymbolsInUse: return "block uses no byte values";
    case ErrorCode::kBadTableCount: return "Huffman table count outside 2..6";
    case ErrorCode::kBadSelectorCount: return "zero Huffman table selectors";
    case ErrorCode::kBadSelector: return "selector names a missing Huffman table";
    case ErrorCode::kBadCodeLength: return "Huffman code length outside 1..20";
    case ErrorCode::kBadHuffmanCode: return "bit pattern matches no Huffman code";
    case ErrorCode::kTooManySelectorsUsed: return "symbols continue past the last selector";
    case ErrorCode::kBlockTooLong: return "block longer than its stream level allows";
    case ErrorCode::kRunTooLong: return "zero-run length out of range";
    case ErrorCode::kBadBwtCycle: return "inverse BWT table inconsistent with the block (corrupt block)";
    case ErrorCode::kBlockCrcMismatch: return "block CRC mismatch";
    case ErrorCode::kStreamCrcMismatch: return "stream CRC mismatch";
    case ErrorCode::kUnfinishedRun: return "block ends inside a run, before its count byte";
  }
  return "unknown error";
}

std::string to_string(const Error& error) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s at bit %llu (byte %llu + %u)", describe(error.code),
                static_cast<unsigned long long>(error.bit_offset),
                static_cast<unsigned long long>(error.bit_offset / 8),
                static_cast<unsigned>(error.bit_offset % 8));
  return buf;
}

}  // namespace mibz2::bz2
