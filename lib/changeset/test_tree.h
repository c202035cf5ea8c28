// Test helpers: small trees of files in a fresh temp folder.
#ifndef GARUDA_LIB_CHANGESET_TEST_TREE_H_
#define GARUDA_LIB_CHANGESET_TEST_TREE_H_

#include <sys/types.h>

#include <map>
#include <string>

namespace garuda::testing {

// A new empty folder under $TEST_TMPDIR (or /tmp), named after `label`.
std::string NewTempDir(const std::string& label);

// Each CHECK-fails the test on error (they are for test set-up).
void Write(const std::string& path, const std::string& content,
           mode_t mode = 0644);  // makes the parent folders
std::string Read(const std::string& path);
void MakeDir(const std::string& path, mode_t mode = 0755);
void Symlink(const std::string& target, const std::string& path);
void Remove(const std::string& path);  // rm -rf
void CopyTree(const std::string& from, const std::string& to);  // cp -a

// Every path beneath `root` with its type, mode and content (or link
// target): two equal snapshots mean an unchanged tree.
std::map<std::string, std::string> Snapshot(const std::string& root);

}  // namespace garuda::testing

#endif  // GARUDA_LIB_CHANGESET_TEST_TREE_H_
