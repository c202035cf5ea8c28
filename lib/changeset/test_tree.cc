#include "lib/changeset/test_tree.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/sha256.h"
#include "lib/changeset/beneath.h"

namespace garuda::testing {

std::string NewTempDir(const std::string& label) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string pattern =
      absl::StrCat(base != nullptr ? base : "/tmp", "/", label, ".XXXXXX");
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp " << pattern;
    std::abort();
  }
  return buffer.data();
}

void Write(const std::string& path, const std::string& content, mode_t mode) {
  if (!MakeDirectories(Dirname(path), 0755).ok()) std::abort();
  ::unlink(path.c_str());
  absl::Status status = WriteFileAtomically(path, content, mode);
  if (!status.ok()) {
    ADD_FAILURE() << status;
    std::abort();
  }
}

std::string Read(const std::string& path) {
  absl::StatusOr<std::string> content = ReadFileToString(path);
  if (!content.ok()) return absl::StrCat("<", content.status().ToString(), ">");
  return *content;
}

void MakeDir(const std::string& path, mode_t mode) {
  if (!MakeDirectories(path, mode).ok()) std::abort();
  ::chmod(path.c_str(), mode);
}

void Symlink(const std::string& target, const std::string& path) {
  if (!MakeDirectories(Dirname(path), 0755).ok()) std::abort();
  if (::symlink(target.c_str(), path.c_str()) != 0) {
    ADD_FAILURE() << "symlink " << path;
    std::abort();
  }
}

namespace {

int Run(const std::vector<std::string>& argv) {
  pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> args;
    for (const std::string& arg : argv)
      args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

void SnapshotInto(const std::string& root, const std::string& relative,
                  std::map<std::string, std::string>* out) {
  std::string path =
      relative.empty() ? root : absl::StrCat(root, "/", relative);
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return;
  std::vector<std::string> names;
  while (struct dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(dir);
  for (const std::string& name : names) {
    std::string child =
        relative.empty() ? name : absl::StrCat(relative, "/", name);
    std::string full = absl::StrCat(root, "/", child);
    struct stat st;
    if (::lstat(full.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      (*out)[child] = absl::StrFormat("dir %o", st.st_mode & 07777);
      SnapshotInto(root, child, out);
    } else if (S_ISLNK(st.st_mode)) {
      char target[4096];
      ssize_t n = ::readlink(full.c_str(), target, sizeof(target));
      (*out)[child] = absl::StrCat("link ", std::string(target, n > 0 ? n : 0));
    } else if (S_ISREG(st.st_mode)) {
      (*out)[child] =
          absl::StrFormat("file %o ", st.st_mode & 07777) + Read(full);
    } else {
      (*out)[child] = absl::StrFormat("special %o", st.st_mode);
    }
  }
}

}  // namespace

void Remove(const std::string& path) {
  if (Run({"rm", "-rf", "--", path}) != 0) std::abort();
}

void CopyTree(const std::string& from, const std::string& to) {
  if (Run({"cp", "-a", "--", from, to}) != 0) std::abort();
}

std::map<std::string, std::string> Snapshot(const std::string& root) {
  std::map<std::string, std::string> out;
  SnapshotInto(root, "", &out);
  return out;
}

ProjectPair MakeProjectPair(const std::string& label) {
  ProjectPair pair;
  pair.base = NewTempDir(label);
  pair.project = pair.base + "/project";
  pair.staged = pair.base + "/staged";
  Write(pair.project + "/a.txt", "a\n");
  Write(pair.project + "/src/x.c", "int x;\n");
  Write(pair.project + "/src/y.c", "int y;\n");
  Write(pair.project + "/d/one", "1\n");
  Write(pair.project + "/d/two", "2\n");
  Write(pair.project + "/tool.sh", "#!/bin/sh\n", 0755);
  CopyTree(pair.project, pair.staged);
  return pair;
}

Change AddedFile(const std::string& path, const std::string& content) {
  Change change;
  change.entry.set_path(path);
  change.entry.set_kind(CHANGE_KIND_ADDED);
  change.entry.mutable_base()->set_type(FILE_TYPE_ABSENT);
  change.entry.set_new_type(FILE_TYPE_REGULAR);
  change.entry.set_new_mode(0644);
  change.entry.set_size(content.size());
  change.entry.set_new_sha256(Sha256Bytes(content));
  change.content = content;
  return change;
}

const ChangeEntry* FindEntry(const ChangeSet& change_set,
                             const std::string& path) {
  for (const Change& change : change_set.changes) {
    if (change.entry.path() == path) return &change.entry;
  }
  return nullptr;
}

}  // namespace garuda::testing
