// What the kernel must drop when SOURCE changes under the mount (the source watcher's reports),
// so that names and sizes follow SOURCE rather than the kernel's hour-long caches.
//
// For an entry N of a directory D that changed: the kernel's entries for every name whose showing
// N can change in D (names_affected_by: N, its decompressed name, their rivals), so that the next
// access looks each up again and lands on the node of what the path holds now; and the attributes
// of the nodes of those names that are directories or symlinks (a node of theirs outlives a change
// of their attributes). Only names the kernel can hold are sent: the kernel holds a name only with
// a node (looked up), so when none of the names has a node in D nothing is sent for them (a miss
// the kernel cached ends within a second by itself): a tree unpacked into SOURCE costs no message
// per new file. A file's node never changes (a new content is a new node): its attributes and
// pages stay in the kernel for the descriptors already open on it, which keep reading the content
// they opened, to its end (dropping them would fail those reads with ESTALE). D's own attributes
// are dropped, once per batch, when its entries changed, and the daemon reads D again at its next
// listing.
#pragma once

#include <vector>

#include "fs/inode_table.h"
#include "fs/kernel_notifier.h"
#include "fs/source_watcher.h"

namespace mibz2::fs {

// Tells the kernel (through `notifier`, which never waits) to drop what it may hold of `changes`.
void drop_changed(InodeTable& inodes, KernelNotifier& notifier, const std::vector<SourceWatcher::Change>& changes);
// Changes were lost: every name the kernel holds and the attributes of every directory and
// symlink it holds are dropped.
void drop_everything(InodeTable& inodes, KernelNotifier& notifier);

}  // namespace mibz2::fs
