// A mount's parts without a mount, for the unit tests of src/fs: SOURCE in a scratch directory,
// an engine with one decoder thread, an index store in memory, the catalog and the inode table.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "catalog/catalog.h"
#include "engine/engine.h"
#include "fs/inode_table.h"
#include "index/index_store.h"
#include "io/source_root.h"

namespace mibz2::fs::test {

inline engine::EngineOptions one_thread_engine() {
  engine::EngineOptions o;
  o.threads = 1;
  o.cache_size = 8 << 20;
  return o;
}

class FsUnitRig {
 public:
  FsUnitRig() : dir_(make_scratch()), engine_(one_thread_engine()), catalog_(engine_, store_) {
    EXPECT_EQ(root_.open(dir_), 0);
    struct stat st{};
    EXPECT_EQ(root_.lstat("", &st), 0);
    inodes_ = std::make_unique<InodeTable>(root_, io::SourceStamp::of(st), catalog_);
  }
  ~FsUnitRig() {
    inodes_.reset();
    catalog_.shutdown();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Writes `content` at `rel` under SOURCE (replacing the file in place, same inode, if it exists).
  void write(const std::string& rel, const std::string& content) {
    std::ofstream(dir_ + "/" + rel, std::ios::binary | std::ios::trunc) << content;
  }
  // The file at `rel` replaced by a new one (another inode) with `content`.
  void replace(const std::string& rel, const std::string& content) {
    write(rel + ".new", content);
    std::filesystem::rename(dir_ + "/" + rel + ".new", dir_ + "/" + rel);
  }
  void mkdir(const std::string& rel) { std::filesystem::create_directory(dir_ + "/" + rel); }
  void symlink(const std::string& target, const std::string& rel) {
    std::filesystem::create_symlink(target, dir_ + "/" + rel);
  }
  struct stat lstat(const std::string& rel) const {
    struct stat st{};
    EXPECT_EQ(root_.lstat(rel, &st), 0) << rel;
    return st;
  }
  io::SourceStamp stamp(const std::string& rel) const { return io::SourceStamp::of(lstat(rel)); }

  const std::string& dir() const { return dir_; }
  io::SourceRoot& root() { return root_; }
  engine::Engine& engine() { return engine_; }
  catalog::Catalog& catalog() { return catalog_; }
  InodeTable& inodes() { return *inodes_; }

 private:
  static std::string make_scratch() {
    std::string t = (std::filesystem::temp_directory_path() / "mibz2-fs-unit-XXXXXX").string();
    if (!mkdtemp(t.data())) ADD_FAILURE() << "mkdtemp failed";
    return t;
  }

  std::string dir_;
  io::LocalSourceRoot root_;
  engine::Engine engine_;
  index::IndexStore store_;
  catalog::Catalog catalog_;
  std::unique_ptr<InodeTable> inodes_;
};

}  // namespace mibz2::fs::test
