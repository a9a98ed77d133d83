// The inode table without a mount (inode_table.h): lookup counts and forget, numbers never
// reused, a new node for a new content or file, retire(), and what find_node() and current()
// (node_checks.h) answer for a missing, forgotten, stale or retired node.
#include <algorithm>
#include <cerrno>

#include <gtest/gtest.h>

#include "fs/node_checks.h"
#include "fs_unit_rig.h"

namespace mibz2::fs {
namespace {

using test::FsUnitRig;

bool held(InodeTable& t, fuse_ino_t ino) {
  const auto nodes = t.held_nodes();
  return std::any_of(nodes.begin(), nodes.end(), [ino](const NodeRef& n) { return n->ino == ino; });
}

TEST(FsInodeTable, TheRootIsSourceAndIsNeverForgotten) {
  FsUnitRig rig;
  const NodeRef root = rig.inodes().find(FUSE_ROOT_ID);
  ASSERT_TRUE(root);
  EXPECT_EQ(root->kind, NodeKind::kDirectory);
  EXPECT_EQ(root->rel, "");
  EXPECT_EQ(rig.inodes().at(""), root);
  EXPECT_EQ(rig.inodes().forget(FUSE_ROOT_ID, 1000), nullptr);
  EXPECT_EQ(rig.inodes().find(FUSE_ROOT_ID), root);
  EXPECT_TRUE(held(rig.inodes(), FUSE_ROOT_ID));
  EXPECT_EQ(rig.inodes().size(), 1u);
}

TEST(FsInodeTable, ANodeLivesUntilEveryLookupIsForgotten) {
  FsUnitRig rig;
  rig.write("a", "hello");
  InodeTable& t = rig.inodes();
  const NodeRef n = t.lookup("a", NodeKind::kRegular, rig.stamp("a"));
  EXPECT_EQ(t.lookup("a", NodeKind::kRegular, rig.stamp("a")), n);  // the same node, counted twice
  EXPECT_GT(n->ino, FUSE_ROOT_ID);
  EXPECT_EQ(n->lookups, 2u);
  EXPECT_TRUE(held(t, n->ino));
  EXPECT_EQ(t.forget(n->ino, 1), nullptr);
  EXPECT_EQ(t.find(n->ino), n);
  const NodeRef gone = t.forget(n->ino, 1);
  EXPECT_EQ(gone, n);  // returned to the caller, to be released after the table's lock
  EXPECT_EQ(t.find(n->ino), nullptr);
  EXPECT_EQ(t.at("a"), nullptr);
  EXPECT_FALSE(held(t, n->ino));
}

TEST(FsInodeTable, ForgettingMoreThanWasLookedUpDropsTheNodeOnce) {
  FsUnitRig rig;
  rig.write("a", "hello");
  InodeTable& t = rig.inodes();
  const NodeRef n = t.lookup("a", NodeKind::kRegular, rig.stamp("a"));
  EXPECT_EQ(t.forget(n->ino, 5), n);
  EXPECT_EQ(t.forget(n->ino, 1), nullptr);  // an unknown number: nothing
  EXPECT_EQ(t.forget(987654, 1), nullptr);
}

TEST(FsInodeTable, NumbersAreNeverReused) {
  FsUnitRig rig;
  rig.write("a", "hello");
  InodeTable& t = rig.inodes();
  const fuse_ino_t first = t.lookup("a", NodeKind::kRegular, rig.stamp("a"))->ino;
  t.forget(first, 1);
  const fuse_ino_t second = t.lookup("a", NodeKind::kRegular, rig.stamp("a"))->ino;
  EXPECT_GT(second, first);
}

TEST(FsInodeTable, ANodeMadeWithoutALookupIsNotHeld) {
  FsUnitRig rig;
  rig.write("a", "hello");
  InodeTable& t = rig.inodes();
  const NodeRef n = t.get_or_create("a", NodeKind::kRegular, rig.stamp("a"));
  EXPECT_EQ(n->lookups, 0u);
  EXPECT_EQ(t.at("a"), n);
  EXPECT_EQ(t.find(n->ino), n);
  EXPECT_FALSE(held(t, n->ino));
  // A lookup of the same file and content counts on that node.
  EXPECT_EQ(t.lookup("a", NodeKind::kRegular, rig.stamp("a")), n);
  EXPECT_TRUE(held(t, n->ino));
}

TEST(FsInodeTable, ANewContentGetsANewNodeAndTheOldOneStaysWhileHeld) {
  FsUnitRig rig;
  rig.write("a", "hello");
  InodeTable& t = rig.inodes();
  const NodeRef old = t.lookup("a", NodeKind::kRegular, rig.stamp("a"));
  rig.write("a", "a longer content");  // rewritten in place: same file, another content
  const NodeRef now = t.lookup("a", NodeKind::kRegular, rig.stamp("a"));
  EXPECT_NE(now->ino, old->ino);
  EXPECT_EQ(t.at("a"), now);
  EXPECT_EQ(t.find(old->ino), old);  // the kernel still holds it
  // The old node's source is gone: it answers ESTALE, the new one does not.
  struct stat st;
  EXPECT_EQ(current(rig.root(), *old, &st), ESTALE);
  EXPECT_EQ(current(rig.root(), *now, &st), 0);
  EXPECT_FALSE(stands_for(*old, st));
  EXPECT_TRUE(stands_for(*now, st));
}

TEST(FsInodeTable, ANodeNeverLookedUpIsDroppedWhenItsPathGetsANewNode) {
  FsUnitRig rig;
  rig.write("a", "hello");
  InodeTable& t = rig.inodes();
  const NodeRef walked = t.get_or_create("a", NodeKind::kRegular, rig.stamp("a"));
  rig.replace("a", "another file");
  const NodeRef now = t.get_or_create("a", NodeKind::kRegular, rig.stamp("a"));
  EXPECT_NE(now->ino, walked->ino);
  EXPECT_EQ(t.find(walked->ino), nullptr);
}

TEST(FsInodeTable, DirectoriesAndLinksAreBoundToTheFileNotItsContent) {
  FsUnitRig rig;
  rig.mkdir("d");
  InodeTable& t = rig.inodes();
  const NodeRef d = t.lookup("d", NodeKind::kDirectory, rig.stamp("d"));
  rig.write("d/x", "an entry changes the directory's times");
  EXPECT_EQ(t.lookup("d", NodeKind::kDirectory, rig.stamp("d")), d);
  struct stat st;
  EXPECT_EQ(current(rig.root(), *d, &st), 0);
  // Another kind at the same path is another node.
  EXPECT_NE(t.lookup("d", NodeKind::kRegular, rig.stamp("d"))->ino, d->ino);
}

TEST(FsInodeTable, ListedNumbersFollowTheFileWhateverItsContent) {
  FsUnitRig rig;
  rig.write("a", "hello");
  InodeTable& t = rig.inodes();
  const io::SourceStamp listed = rig.stamp("a");
  const NodeRef n = t.lookup("a", NodeKind::kRegular, listed);
  rig.write("a", "rewritten, same inode");
  EXPECT_EQ(t.number_of("a", NodeKind::kRegular, rig.stamp("a")), n->ino);
  rig.replace("a", "another inode");
  const fuse_ino_t other = t.number_of("a", NodeKind::kRegular, rig.stamp("a"));
  EXPECT_NE(other, n->ino);
  EXPECT_EQ(t.at("a")->ino, other);
}

TEST(FsInodeTable, RetireGivesThePathANewNodeOnTheSameCatalogEntry) {
  FsUnitRig rig;
  rig.mkdir("d");
  rig.write("d/x.bz2", "not really bzip2: the table never reads it");
  InodeTable& t = rig.inodes();
  const NodeRef dir = t.lookup("d", NodeKind::kDirectory, rig.stamp("d"));
  const NodeRef n = t.lookup("d/x.bz2", NodeKind::kDecompressed, rig.stamp("d/x.bz2"));
  ASSERT_TRUE(n->file);
  EXPECT_EQ(t.current_decompressed_files(), std::vector<catalog::FileRef>{n->file});

  const std::optional<InodeTable::Retired> r = t.retire(n->file);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->ino, n->ino);
  EXPECT_EQ(r->parent, dir->ino);
  EXPECT_EQ(r->name, "x");  // the name the kernel knows it by
  EXPECT_TRUE(n->retired);
  EXPECT_FALSE(t.retire(n->file));  // once

  // The retired node still answers (the kernel may hold it), with ESTALE.
  EXPECT_EQ(t.find(n->ino), n);
  struct stat st;
  EXPECT_EQ(current(rig.root(), *n, &st), ESTALE);
  NodeRef found;
  EXPECT_EQ(find_node(t, n->ino, NodeNeed::kAny, &found), 0);
  EXPECT_EQ(found, n);

  // The same file and content looked up again: a new number, the same catalog entry.
  const NodeRef again = t.lookup("d/x.bz2", NodeKind::kDecompressed, rig.stamp("d/x.bz2"));
  EXPECT_NE(again->ino, n->ino);
  EXPECT_FALSE(again->retired);
  EXPECT_EQ(again->file, n->file);
  EXPECT_EQ(t.at("d/x.bz2"), again);
  EXPECT_EQ(current(rig.root(), *again, &st), 0);
}

TEST(FsInodeTable, RetireWithoutTheParentsNodeTellsNoName) {
  FsUnitRig rig;
  rig.mkdir("d");
  rig.write("d/x.bz2", "data");
  InodeTable& t = rig.inodes();
  const NodeRef n = t.lookup("d/x.bz2", NodeKind::kDecompressed, rig.stamp("d/x.bz2"));
  const auto r = t.retire(n->file);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->parent, 0u);
  EXPECT_EQ(r->name, "");
}

TEST(FsInodeTable, FindNodeAnswersEveryOperationAlike) {
  FsUnitRig rig;
  rig.write("a", "hello");
  rig.symlink("a", "l");
  InodeTable& t = rig.inodes();
  const NodeRef file = t.lookup("a", NodeKind::kRegular, rig.stamp("a"));
  const NodeRef link = t.lookup("l", NodeKind::kSymlink, rig.stamp("l"));
  NodeRef n;
  // A number the table does not have (never given, or forgotten): ESTALE, whatever is asked.
  for (NodeNeed need : {NodeNeed::kAny, NodeNeed::kDirectory, NodeNeed::kLink}) {
    EXPECT_EQ(find_node(t, 424242, need, &n), ESTALE);
    EXPECT_EQ(n, nullptr);
  }
  EXPECT_EQ(find_node(t, FUSE_ROOT_ID, NodeNeed::kDirectory, &n), 0);
  EXPECT_EQ(find_node(t, file->ino, NodeNeed::kDirectory, &n), ENOTDIR);
  EXPECT_EQ(find_node(t, file->ino, NodeNeed::kLink, &n), EINVAL);
  EXPECT_EQ(find_node(t, FUSE_ROOT_ID, NodeNeed::kLink, &n), EINVAL);
  EXPECT_EQ(find_node(t, link->ino, NodeNeed::kLink, &n), 0);
  EXPECT_EQ(n, link);
  EXPECT_EQ(find_node(t, file->ino, NodeNeed::kAny, &n), 0);
  EXPECT_EQ(n, file);
  t.forget(file->ino, 1);
  EXPECT_EQ(find_node(t, file->ino, NodeNeed::kAny, &n), ESTALE);
}

TEST(FsInodeTable, ASourceGoneOrReplacedByAnotherKindIsStaleOrMissing) {
  FsUnitRig rig;
  rig.write("a", "hello");
  InodeTable& t = rig.inodes();
  const NodeRef n = t.lookup("a", NodeKind::kRegular, rig.stamp("a"));
  struct stat st;
  std::filesystem::remove(rig.dir() + "/a");
  EXPECT_EQ(current(rig.root(), *n, &st), ENOENT);
  rig.mkdir("a");
  EXPECT_EQ(current(rig.root(), *n, &st), ESTALE);
}

}  // namespace
}  // namespace mibz2::fs
