// Which reads of a remote source come from a sequential reader, so that it gets read-ahead while
// random readers get exactly what they ask for.
//
// A few streams are followed at once (a build scans forward while its decoders read the blocks
// just scanned; a Reader's read-ahead decodes blocks in parallel, slightly out of order). A read
// that starts at a stream's front (or a little before it: reads overlap by a few bytes) and ends
// past it continues the stream; one that starts a little past the front (a block read before the
// one in front of it) moves the front on without counting as a continuation, so that reads that
// skip blocks (a sample of every other block) never look sequential; a read inside a stream
// (behind its front, after its start) only keeps it alive; any other read starts a stream of its
// own in place of the one used longest ago. A stream is sequential once it has been continued
// twice and its reads have covered kSequentialBytes: a random read of a few blocks (with the few
// its reader decodes ahead) is not, so it fetches about what it reads; and read-ahead then grows
// with what the stream has covered (Seen::covered), as the kernel's does for files.
#pragma once

#include <array>
#include <cstdint>

namespace mibz2::io {

class SequentialReads {
 public:
  // Bytes a stream's reads must have covered (continued twice at least) to be sequential: more
  // than a random read of 1 MiB does, with the blocks its reader decodes ahead of it (under 1 MB
  // of real JSON's 150 kB blocks; scripts/bench-remote-dump counts the bytes of such reads).
  static constexpr uint64_t kSequentialBytes = 3 << 20;
  // How far from a stream's front, before or after it, a read may start and continue it.
  static constexpr uint64_t kOverlapBytes = 64 << 10;
  // How far past its front a read may start and move it on: about three blocks.
  static constexpr uint64_t kGapBytes = 1 << 20;

  struct Seen {
    bool sequential = false;
    uint64_t front = 0;  // the stream's front: the furthest byte its reads have reached
    uint64_t covered = 0;  // bytes its reads have covered
  };

  // Notes a read of [begin, end) and says what it belongs to.
  Seen note(uint64_t begin, uint64_t end);

 private:
  struct Stream {
    bool live = false;
    uint64_t start = 0;  // where its first read began
    uint64_t front = 0;
    uint64_t covered = 0;  // bytes its reads added past the front
    unsigned continued = 0;
    uint64_t used = 0;  // tick of its last read
  };
  static bool sequential(const Stream& s);

  std::array<Stream, 4> streams_;
  uint64_t tick_ = 0;
};

}  // namespace mibz2::io
