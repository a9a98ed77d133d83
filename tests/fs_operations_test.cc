// The pure parts of the FUSE operations, without a mount: permission decisions (access_check.h),
// the attributes shown for a node (node_attributes.h), listings' lookups and types
// (directory_listing.h), and the extended attributes' names, values and buffer sizes
// (extended_attributes.h).
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <unistd.h>

#include <gtest/gtest.h>

#include "fs/access_check.h"
#include "fs/directory_listing.h"
#include "fs/extended_attributes.h"
#include "fs/node_attributes.h"
#include "fs/node_checks.h"
#include "fs/source_watcher.h"
#include "fs_unit_rig.h"
#include "test_support.h"

namespace mibz2::fs {
namespace {

using test::FsUnitRig;

struct stat owned(uid_t uid, gid_t gid, mode_t mode) {
  struct stat st{};
  st.st_uid = uid;
  st.st_gid = gid;
  st.st_mode = S_IFREG | mode;
  return st;
}

Caller caller(uid_t uid, gid_t gid, std::vector<gid_t> groups = {}) {
  Caller c;
  c.uid = uid;
  c.gid = gid;
  c.in_group = [groups](gid_t g) { return std::find(groups.begin(), groups.end(), g) != groups.end(); };
  return c;
}

TEST(FsAccessCheck, RootMayAlways) {
  EXPECT_EQ(permitted(caller(0, 0), owned(1000, 1000, 0000), R_OK), 0);
  EXPECT_EQ(permitted(caller(0, 0), owned(1000, 1000, 0000), X_OK), 0);
}

TEST(FsAccessCheck, TheOwnerBitsDecideForTheOwnerAlone) {
  EXPECT_EQ(permitted(caller(1000, 1000), owned(1000, 1000, 0400), R_OK), 0);
  EXPECT_EQ(permitted(caller(1000, 1000), owned(1000, 1000, 0400), X_OK), EACCES);
  // The owner with no read bit is refused even when group and others may read.
  EXPECT_EQ(permitted(caller(1000, 1000), owned(1000, 1000, 0044), R_OK), EACCES);
  EXPECT_EQ(permitted(caller(1000, 1000), owned(1000, 1000, 0500), R_OK | X_OK), 0);
  EXPECT_EQ(permitted(caller(1000, 1000), owned(1000, 1000, 0600), R_OK | X_OK), EACCES);
}

TEST(FsAccessCheck, TheGroupBitsDecideForTheGroupPrimaryOrSupplementary) {
  EXPECT_EQ(permitted(caller(2000, 50), owned(1000, 50, 0640), R_OK), 0);
  EXPECT_EQ(permitted(caller(2000, 60), owned(1000, 50, 0640), R_OK), EACCES);
  EXPECT_EQ(permitted(caller(2000, 60, {50}), owned(1000, 50, 0640), R_OK), 0);
  // A group member with no group bit is refused even when others may read.
  EXPECT_EQ(permitted(caller(2000, 50), owned(1000, 50, 0604), R_OK), EACCES);
  EXPECT_EQ(permitted(caller(2000, 60, {50}), owned(1000, 50, 0604), R_OK), EACCES);
}

TEST(FsAccessCheck, SupplementaryGroupsAreAskedOnlyWhenTheGroupDecides) {
  int asked = 0;
  Caller c = caller(2000, 60);
  c.in_group = [&asked](gid_t) { return ++asked, true; };
  EXPECT_EQ(permitted(c, owned(1000, 50, 0644), R_OK), 0);  // group and others alike
  EXPECT_EQ(asked, 0);
  EXPECT_EQ(permitted(c, owned(1000, 50, 0640), R_OK), 0);
  EXPECT_EQ(asked, 1);
  c.in_group = nullptr;  // none known: others' bits
  EXPECT_EQ(permitted(c, owned(1000, 50, 0640), R_OK), EACCES);
}

TEST(FsAccessCheck, OthersBitsDecideForTheRest) {
  EXPECT_EQ(permitted(caller(3000, 70), owned(1000, 50, 0604), R_OK), 0);
  EXPECT_EQ(permitted(caller(3000, 70), owned(1000, 50, 0640), R_OK), EACCES);
  EXPECT_EQ(permitted(caller(3000, 70), owned(1000, 50, 0755), X_OK), 0);
  EXPECT_EQ(permitted(caller(3000, 70), owned(1000, 50, 0754), X_OK), EACCES);
}

catalog::ShownEntry entry(std::string name, catalog::SourceEntry::Type type, bool decompressed = false) {
  catalog::ShownEntry e{};
  e.name = name;
  e.source_name = decompressed ? name + ".bz2" : name;
  e.type = type;
  e.decompressed = decompressed;
  return e;
}

TEST(FsDirectoryListing, EntriesAreTypedAsTheirSources) {
  using T = catalog::SourceEntry::Type;
  EXPECT_EQ(kind_of(entry("d", T::kDirectory)), NodeKind::kDirectory);
  EXPECT_EQ(kind_of(entry("f", T::kRegular)), NodeKind::kRegular);
  EXPECT_EQ(kind_of(entry("l", T::kSymlink)), NodeKind::kSymlink);
  EXPECT_EQ(kind_of(entry("x", T::kRegular, true)), NodeKind::kDecompressed);
  EXPECT_EQ(kind_of(entry("y", T::kSymlink, true)), NodeKind::kLinkToDecompressed);
  EXPECT_EQ(listed_mode(entry("d", T::kDirectory)), S_IFDIR);
  EXPECT_EQ(listed_mode(entry("l", T::kSymlink, true)), S_IFLNK);
  EXPECT_EQ(listed_mode(entry("x", T::kRegular, true)), S_IFREG);
  struct stat st{};
  st.st_mode = S_IFDIR | 0755;
  EXPECT_TRUE(same_type(entry("d", T::kDirectory), st));
  EXPECT_FALSE(same_type(entry("f", T::kRegular), st));
  st.st_mode = S_IFLNK | 0777;
  EXPECT_TRUE(same_type(entry("l", T::kSymlink), st));
  EXPECT_FALSE(same_type(entry("x", T::kRegular, true), st));
}

TEST(FsDirectoryListing, AShownNameIsFoundExactly) {
  using T = catalog::SourceEntry::Type;
  const std::vector<catalog::ShownEntry> entries = {entry("a", T::kRegular), entry("b", T::kRegular, true),
                                           entry("bb", T::kDirectory)};
  EXPECT_EQ(find_shown(entries, "b"), &entries[1]);
  EXPECT_EQ(find_shown(entries, "bb"), &entries[2]);
  EXPECT_EQ(find_shown(entries, "b.bz2"), nullptr);
  EXPECT_EQ(find_shown(entries, ""), nullptr);
  EXPECT_EQ(find_shown(entries, "c"), nullptr);
  EXPECT_EQ(find_shown({}, "a"), nullptr);
}

TEST(FsDirectoryListing, ListsTheSourceDirectoryShownAndKeepsIt) {
  FsUnitRig rig;
  rig.mkdir("d");
  rig.write("d/plain", "text");
  NodeRef dir = rig.inodes().lookup("d", NodeKind::kDirectory, rig.stamp("d"));
  Listing shown;
  struct stat st;
  ASSERT_EQ(listing(rig.root(), *dir, &shown, &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  ASSERT_EQ(shown->size(), 1u);
  EXPECT_EQ((*shown)[0].name, "plain");
  // A file where the directory was (made before the directory goes, so another inode): the node
  // is stale.
  rig.write("f", "a file now");
  std::filesystem::remove_all(rig.dir() + "/d");
  std::filesystem::rename(rig.dir() + "/f", rig.dir() + "/d");
  EXPECT_EQ(listing(rig.root(), *dir, &shown), ESTALE);
  // A node that is not a directory's cannot be listed.
  NodeRef file = rig.inodes().lookup("d", NodeKind::kRegular, rig.stamp("d"));
  EXPECT_EQ(listing(rig.root(), *file, &shown), ENOTDIR);
}

TEST(FsNodeAttributes, ADecompressedSizeFillsSizeBlocksAndBlockSize) {
  struct stat st{};
  show_decompressed_size(&st, 1000);
  EXPECT_EQ(st.st_size, 1000);
  EXPECT_EQ(st.st_blocks, 2);  // 512-byte units, rounded up
  EXPECT_EQ(st.st_blksize, 128 * 1024);
  show_decompressed_size(&st, 0);
  EXPECT_EQ(st.st_blocks, 0);
}

TEST(FsNodeAttributes, PlainNodesShowTheirSourceWithTheNodesNumber) {
  FsUnitRig rig;
  rig.write("a", "hello");
  const NodeRef n = rig.inodes().lookup("a", NodeKind::kRegular, rig.stamp("a"));
  NodeAttributes attributes(rig.root(), rig.catalog());
  struct stat st;
  bool final = false;
  ASSERT_EQ(attributes.of(*n, &st, /*wait=*/true, &final), 0);
  EXPECT_TRUE(final);
  EXPECT_EQ(st.st_ino, n->ino);
  EXPECT_EQ(st.st_size, 5);
  rig.write("a", "rewritten");
  EXPECT_EQ(attributes.of(*n, &st, true, &final), ESTALE);
}

TEST(FsNodeAttributes, ALinkToACompressedFileShowsItsDecompressedTarget) {
  FsUnitRig rig;
  rig.write("x.bz2", "BZh91AY&SY");  // a bzip2 stream's head: shown decompressed, as "x"
  rig.symlink("x.bz2", "latest.bz2");
  const NodeRef n = rig.inodes().lookup("latest.bz2", NodeKind::kLinkToDecompressed, rig.stamp("latest.bz2"));
  NodeAttributes attributes(rig.root(), rig.catalog());
  std::string target;
  ASSERT_EQ(attributes.link_target(*n, &target), 0);
  EXPECT_EQ(target, "x");
  struct stat st;
  bool final = false;
  ASSERT_EQ(attributes.of(*n, &st, false, &final), 0);
  EXPECT_EQ(st.st_size, 1);  // the length of the target shown
  EXPECT_TRUE(final);
}

TEST(FsNodeAttributes, AnIndexDescribesOnlyTheContentItWasMadeFrom) {
  Node node;
  node.stamp = {1, 2, 300, 400, 500};
  index::BlockIndex idx;
  idx.source.size = 300;
  idx.source.mtime_ns = 400;
  idx.source.inode = 2;
  EXPECT_TRUE(describes(idx, node));
  node.stamp.ctime_ns = 501;  // a chmod: the catalog confirms the index again; it still describes
  EXPECT_TRUE(describes(idx, node));
  idx.source.size = 301;
  EXPECT_FALSE(describes(idx, node));
}

TEST(FsExtendedAttributes, NamesAreKnownExactly) {
  EXPECT_EQ(xattr_named("user.mibz2fs.stats"), Xattr::kStats);
  EXPECT_EQ(xattr_named("user.mibz2fs.index"), Xattr::kIndex);
  EXPECT_EQ(xattr_named("user.mibz2fs.compressed_size"), Xattr::kCompressedSize);
  EXPECT_EQ(xattr_named("user.mibz2fs.blocks"), Xattr::kBlocks);
  EXPECT_EQ(xattr_named("user.mibz2fs.damaged_blocks"), Xattr::kDamagedBlocks);
  EXPECT_EQ(xattr_named("user.mibz2fs.damage"), Xattr::kDamage);
  EXPECT_EQ(xattr_named("user.mibz2fs.lines"), Xattr::kLines);
  EXPECT_EQ(xattr_named("user.mibz2fs.line"), Xattr::kUnknown);
  EXPECT_EQ(xattr_named("user.mibz2fs.damag"), Xattr::kUnknown);
  EXPECT_EQ(xattr_named("user.mibz2fs.blocks "), Xattr::kUnknown);
  EXPECT_EQ(xattr_named("security.selinux"), Xattr::kUnknown);
  EXPECT_EQ(xattr_named(""), Xattr::kUnknown);
}

TEST(FsExtendedAttributes, IndexValuesCountBlocksAndDamage) {
  index::BlockIndex idx;
  idx.blocks.push_back(index::BlockRecord::make(32, 9, index::BlockRecord::kStreamStart, 0, 1000, 1));
  idx.blocks.push_back(index::BlockRecord::make(1032, 9, index::BlockRecord::kCrcMismatch, 900000, 1000, 2));
  idx.decompressed_size = 1800000;
  idx.damaged_blocks = 1;
  EXPECT_EQ(index_xattr_value(Xattr::kBlocks, idx), "2");
  EXPECT_EQ(index_xattr_value(Xattr::kDamagedBlocks, idx), "1");
  const std::string damage = index_xattr_value(Xattr::kDamage, idx);
  EXPECT_NE(damage.find("block 1"), std::string::npos) << damage;
  EXPECT_EQ(damage.back(), '\n');
  idx.blocks.pop_back();
  idx.damaged_blocks = 0;
  EXPECT_EQ(index_xattr_value(Xattr::kDamage, idx), "");
}

TEST(FsExtendedAttributes, LinesAreTheCountOrSayWhyTheyAreUnknown) {
  index::BlockIndex idx;
  idx.blocks.push_back(index::BlockRecord::make(32, 9, index::BlockRecord::kStreamStart, 0, 1000, 1));
  idx.blocks.push_back(index::BlockRecord::make(1032, 9, 0, 900000, 1000, 2));
  idx.decompressed_size = 1800000;
  idx.newlines = {7000, 5000};
  idx.line_count = 12001;  // no newline at the end: one line more than newlines, as sed counts
  EXPECT_EQ(index_xattr_value(Xattr::kLines, idx), "12001");
  // A damaged block: no count, and what comes after it is unknown, said as such.
  idx.blocks.mutable_at(1).flags |= index::BlockRecord::kCrcMismatch;
  idx.damaged_blocks = 1;
  idx.newlines.mutable_at(1) = index::kUnknownNewlines;
  idx.line_count = index::kUnknownLines;
  const std::string damaged = index_xattr_value(Xattr::kLines, idx);
  EXPECT_EQ(damaged.rfind("unknown: block 1 ", 0), 0u) << damaged;
  EXPECT_NE(damaged.find("is damaged (CRC mismatch)"), std::string::npos) << damaged;
  // An index made before line counts (format version 2): no counts at all.
  idx.newlines.clear();
  idx.blocks.mutable_at(1).flags = 0;
  idx.damaged_blocks = 0;
  const std::string old = index_xattr_value(Xattr::kLines, idx);
  EXPECT_EQ(old.rfind("unknown: the index has no line counts", 0), 0u) << old;
}

// user.mibz2fs.lines of a real file: ENODATA while it is not indexed (never a wait), then the
// count of its bytes as sed counts them.
TEST(FsExtendedAttributes, LinesOfAFileAreThereOnceItIsIndexed) {
  FsUnitRig rig;
  std::string plain;
  for (int i = 1; i <= 5000; ++i) plain += "line " + std::to_string(i) + (i % 7 ? " of text\n" : "\n\n");
  plain += "a last line without its newline";
  const size_t newlines = static_cast<size_t>(std::count(plain.begin(), plain.end(), '\n'));
  const mibz2::test::Bytes compressed = mibz2::test::libbz2_compress(mibz2::test::to_bytes(plain), 1);
  rig.write("x.bz2", std::string(compressed.begin(), compressed.end()));
  SourceWatcher watcher(rig.root());
  ExtendedAttributes xattrs(rig.root(), rig.engine(), rig.catalog(), rig.inodes(), watcher);
  const NodeRef x = rig.inodes().lookup("x.bz2", NodeKind::kDecompressed, rig.stamp("x.bz2"));
  std::string value;
  EXPECT_EQ(xattrs.get(*x, "user.mibz2fs.lines", &value), ENODATA);
  ASSERT_TRUE(rig.catalog().wait(x->file));
  ASSERT_EQ(xattrs.get(*x, "user.mibz2fs.lines", &value), 0);
  EXPECT_EQ(value, std::to_string(newlines + 1));
}

TEST(FsExtendedAttributes, AValueFitsABufferOfItsSizeOrAsksForTheSize) {
  EXPECT_EQ(fits_xattr_buffer("12345", 0), 0);  // size 0: the caller asks how long it is
  EXPECT_EQ(fits_xattr_buffer("12345", 5), 0);
  EXPECT_EQ(fits_xattr_buffer("12345", 6), 0);
  EXPECT_EQ(fits_xattr_buffer("12345", 4), ERANGE);
  EXPECT_EQ(fits_xattr_buffer("", 1), 0);
}

TEST(FsExtendedAttributes, OnlyDecompressedFilesAndTheRootHaveThem) {
  FsUnitRig rig;
  rig.write("a", "plain");
  rig.write("x.bz2", "compressed bytes");
  SourceWatcher watcher(rig.root());
  ExtendedAttributes xattrs(rig.root(), rig.engine(), rig.catalog(), rig.inodes(), watcher);
  const NodeRef plain = rig.inodes().lookup("a", NodeKind::kRegular, rig.stamp("a"));
  const NodeRef x = rig.inodes().lookup("x.bz2", NodeKind::kDecompressed, rig.stamp("x.bz2"));
  const NodeRef root = rig.inodes().find(FUSE_ROOT_ID);
  std::string value;
  EXPECT_EQ(xattrs.get(*plain, "user.mibz2fs.index", &value), ENODATA);
  EXPECT_EQ(xattrs.get(*root, "user.mibz2fs.compressed_size", &value), ENODATA);
  EXPECT_EQ(xattrs.get(*x, "user.mibz2fs.stats", &value), ENODATA);  // the root's alone
  EXPECT_EQ(xattrs.get(*x, "user.other", &value), ENODATA);
  ASSERT_EQ(xattrs.get(*root, "user.mibz2fs.stats", &value), 0);
  EXPECT_NE(value.find("nodes=3"), std::string::npos) << value;
  ASSERT_EQ(xattrs.get(*x, "user.mibz2fs.compressed_size", &value), 0);
  EXPECT_EQ(value, "16");
  // Rewritten in place: the same file, so its size now; replaced: another file's node answers.
  rig.write("x.bz2", "more compressed bytes");
  ASSERT_EQ(xattrs.get(*x, "user.mibz2fs.compressed_size", &value), 0);
  EXPECT_EQ(value, "21");
  rig.replace("x.bz2", "another file");
  EXPECT_EQ(xattrs.get(*x, "user.mibz2fs.compressed_size", &value), ESTALE);
  EXPECT_EQ(ExtendedAttributes::listed(), "");  // none listed: cp -a must not copy them
}

}  // namespace
}  // namespace mibz2::fs
