// One block of a source checked against its index record, the one check behind both "an index can
// cause a rebuild, never wrong bytes" (every read, engine/reader.cc) and "a copy's index is
// validated by sampling" (the Catalog, when a stored index's content identity matches but its
// mtime or inode do not): the block is read with what must surround it in one request, decoded,
// and its decoded length, stored CRC, end bit and newline count compared with the record, and the
// last block's last byte with the file's line count (index/FORMAT.md, "Identity").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/byte_buffer.h"
#include "base/status.h"
#include "bz2/block_decoder.h"
#include "index/block_index.h"
#include "io/source_bytes.h"

namespace mibz2::index {

struct BlockCheck {
  enum Kind {
    kOk,         // `out` holds the block's bytes, exactly as the record says
    kMismatch,   // the source is not what the index describes (another file, changed in place,
                 // shorter than the index says)
    kReadError,  // a read of the source failed: nothing is known of the block, and nothing of the
                 // index either; a later read may succeed
  };
  Kind kind = kOk;
  // kMismatch: EBADMSG (ENOMEM when it could not be decoded for want of memory), and what
  // differs; kReadError: the read's errno (Status::os_error) and where it failed. ok() for kOk.
  base::Status why;
  // kOk: where the record placed the block when it was checked, the place its bytes are vouched
  // for: [out_offset, out_offset + out.size()) of the decompressed file. Kept with the bytes, so
  // that a read places them by what was checked, not by a record read again later (a mapped
  // index can change in between: io/mapped_file.h).
  uint64_t out_offset = 0;
};

// Decodes block `block` (a record without a damage flag) of `source` into `out` (cleared first),
// using `decoder` and `compressed` as scratch, and checks it against `index`: a stream's first
// block after a gap follows its header, a block the next record does not start right after is
// followed by an end-of-stream marker, and the block decodes (CRC passes) to the record's size, CRC,
// bit length and newline count (when the index has line counts); the last block's last byte must
// be what the file's line count says (a newline, or a last line without one). A record that says
// "sound" and does not decode is a mismatch too: an index builder that decoded it would have
// marked it.
BlockCheck check_block(const BlockIndex& index, size_t block, const io::SourceBytes& source, bz2::BlockDecoder& decoder,
                       base::ByteBuffer& compressed, base::ByteBuffer& out);

// Up to `count` undamaged blocks spread evenly over the index (the first and the last among them),
// in ascending order: the sample a copy's index is validated with.
std::vector<size_t> sample_blocks(const BlockIndex& index, size_t count = 8);

// check_block() in words for a message: empty when it is kOk, else "block 12 (...): why".
std::string describe_check(const BlockIndex& index, size_t block, const BlockCheck& check);

}  // namespace mibz2::index
