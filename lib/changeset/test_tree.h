// Test helpers: small trees of files in a fresh temp folder.
#ifndef GARUDA_LIB_CHANGESET_TEST_TREE_H_
#define GARUDA_LIB_CHANGESET_TEST_TREE_H_

#include <sys/types.h>

#include <map>
#include <string>

#include "lib/changeset/changeset.h"

namespace garuda::testing {

// A new empty folder under $TEST_TMPDIR (or /tmp), named after `label`.
std::string NewTempDir(const std::string& label);

// Each CHECK-fails the test on error (they are for test set-up).
void Write(const std::string& path, const std::string& content,
           mode_t mode = 0644);  // makes the parent folders
std::string Read(const std::string& path);
void MakeDir(const std::string& path, mode_t mode = 0755);
void Symlink(const std::string& target, const std::string& path);
void Remove(const std::string& path);                           // rm -rf
void CopyTree(const std::string& from, const std::string& to);  // cp -a

// Every path beneath `root` with its type, mode and content (or link
// target): two equal snapshots mean an unchanged tree.
std::map<std::string, std::string> Snapshot(const std::string& root);

// A small project (a.txt, src/x.c, src/y.c, d/one, d/two, tool.sh 0755)
// and a full copy of it ("staged"), in a new temp folder.
struct ProjectPair {
  std::string base, project, staged;
};
ProjectPair MakeProjectPair(const std::string& label);

// A list entry that adds the regular file `path` (0644) with `content`,
// the content in memory as a list read from a stream has it.
Change AddedFile(const std::string& path, const std::string& content);

// The entry for `path`, or nullptr.
const ChangeEntry* FindEntry(const ChangeSet& change_set,
                             const std::string& path);

}  // namespace garuda::testing

#endif  // GARUDA_LIB_CHANGESET_TEST_TREE_H_
