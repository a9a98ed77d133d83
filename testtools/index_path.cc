// Prints where mibz2fs keeps the index of a source file: `mibz2-index-path INDEX_DIR SOURCE`.
// scripts/bench-fs uses it to give many hard links of one .bz2 copies of its one index (an index
// file is named after its source's path, and a hard link has the same identity), so that a
// benchmark of many different files does not index the same bytes once per name. Not installed.
#include <cstdio>

#include "index/index_store.h"
#include "io/paths.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fputs("usage: mibz2-index-path INDEX_DIR SOURCE\n", stderr);
    return 2;
  }
  const mibz2::index::IndexStore store(argv[1]);
  std::printf("%s\n", store.path_for(mibz2::io::absolute_path(argv[2])).c_str());
  return 0;
}
