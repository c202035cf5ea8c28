#include "lib/staging/folders.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/home.h"
#include "lib/base/status_macros.h"
#include "lib/changeset/beneath.h"
#include "lib/staging/workers.h"

namespace garuda {
namespace {

constexpr char kLockName[] = "lock";

absl::StatusOr<UniqueFd> LockFolder(const std::string& folder, bool wait,
                                    bool create) {
  std::string path = JoinPath(folder, kLockName);
  ASSIGN_OR_RETURN(
      UniqueFd fd,
      OpenFile(path, O_RDWR | O_NOFOLLOW | (create ? O_CREAT : 0), 0600));
  while (::flock(fd.get(), LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
    if (errno == EINTR) continue;
    return ErrnoStatus(errno, absl::StrCat("flock(", path, ")"));
  }
  return fd;
}

std::string RandomHex() {
  unsigned char bytes[6];
  while (::getrandom(bytes, sizeof bytes, 0) != sizeof bytes) {
  }
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<char*>(bytes), sizeof bytes));
}

// A folder with at least this many subfolders has them removed by
// kRemovers processes (unlinking is CPU work in the kernel, and a copy of
// a project has thousands of files).
constexpr size_t kParallelFolders = 16;
constexpr size_t kRemovers = 3;

absl::Status RemoveContent(int fd, const std::string& shown, bool parallel);

// Removes the subfolder `name` of `fd` and everything in it.
absl::Status RemoveFolderAt(int fd, const std::string& name,
                            const std::string& shown, bool parallel) {
  std::string child = JoinPath(shown, name);
  UniqueFd sub = OpenSubfolder(fd, name);
  if (!sub) return LastErrnoStatus(absl::StrCat("open(", child, ")"));
  RETURN_IF_ERROR(RemoveContent(sub.get(), child, parallel));
  if (::unlinkat(fd, name.c_str(), AT_REMOVEDIR) != 0) {
    return LastErrnoStatus(absl::StrCat("rmdir(", child, ")"));
  }
  return absl::OkStatus();
}

// Removes everything in the open folder `fd`; `parallel`: its subfolders
// may be shared out to worker processes (not again within a worker).
absl::Status RemoveContent(int fd, const std::string& shown, bool parallel) {
  // Overlay's work folder can be mode 000; we own it, so opening it up is
  // only giving ourselves back access to our own files.
  ::fchmod(fd, 0700);
  int copy = ::dup(fd);
  if (copy < 0) return LastErrnoStatus("dup");
  DIR* dir = ::fdopendir(copy);
  if (dir == nullptr) {
    ::close(copy);
    return LastErrnoStatus(absl::StrCat("opendir(", shown, ")"));
  }
  std::vector<std::pair<std::string, bool>> names;
  while (struct dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    names.push_back({name, entry->d_type == DT_DIR});
  }
  ::closedir(dir);
  std::vector<std::string> folders;
  for (const auto& [name, is_dir] : names) {
    if (!is_dir && ::unlinkat(fd, name.c_str(), 0) == 0) continue;
    if (!is_dir && errno != EISDIR && errno != EPERM) {
      return LastErrnoStatus(
          absl::StrCat("unlink(", JoinPath(shown, name), ")"));
    }
    folders.push_back(name);
  }
  if (!parallel || folders.size() < kParallelFolders) {
    for (const std::string& name : folders) {
      RETURN_IF_ERROR(RemoveFolderAt(fd, name, shown, parallel));
    }
    return absl::OkStatus();
  }
  struct Shared {
    std::atomic<uint32_t> next;
    std::atomic<uint32_t> failed;
  };
  SharedMemory memory(sizeof(Shared));
  if (!memory.ok()) return LastErrnoStatus("mmap for the removers");
  Shared* shared = static_cast<Shared*>(memory.data());
  return RunInProcesses(
      kRemovers,
      [&]() -> absl::Status {
        while (shared->failed.load() == 0) {
          uint32_t next = shared->next.fetch_add(1);
          if (next >= folders.size()) break;
          RETURN_IF_ERROR(RemoveFolderAt(fd, folders[next], shown, false));
        }
        return absl::OkStatus();
      },
      &shared->failed,
      // A forked remover writes only beneath the folder it empties.
      [&shown] { return ConfineWritesBeneath(shown); });
}

}  // namespace

absl::StatusOr<std::string> StagingRoot() {
  ASSIGN_OR_RETURN(std::string home, HomeDirectory());
  std::string root = GarudaStagingRoot(home);
  RETURN_IF_ERROR(MakeDirectories(root, 0700));
  return root;
}

absl::Status CheckSessionName(const std::string& name) {
  absl::Status checked = CheckSessionId(name);
  if (checked.ok()) return checked;
  return absl::Status(checked.code(),
                      absl::StrCat("--session: ", checked.message()));
}

absl::StatusOr<StagingFolder> OpenStagingFolder(const std::string& root,
                                                const std::string& project,
                                                const std::string& session) {
  StagingFolder folder;
  std::string hash = ProjectHash(project);
  if (!session.empty()) {
    RETURN_IF_ERROR(CheckSessionName(session));
    folder.named = true;
    folder.path = JoinPath(root, absl::StrCat(hash, "-session-", session));
    if (::mkdir(folder.path.c_str(), 0700) != 0) {
      if (errno != EEXIST) {
        return LastErrnoStatus(absl::StrCat("mkdir(", folder.path, ")"));
      }
      folder.fresh = false;
    }
    ASSIGN_OR_RETURN(folder.lock,
                     LockFolder(folder.path, /*wait=*/true, /*create=*/true));
    return folder;
  }
  folder.path =
      JoinPath(root, absl::StrCat(hash, "-", ::getpid(), "-", RandomHex()));
  if (::mkdir(folder.path.c_str(), 0700) != 0) {
    return LastErrnoStatus(absl::StrCat("mkdir(", folder.path, ")"));
  }
  ASSIGN_OR_RETURN(folder.lock,
                   LockFolder(folder.path, /*wait=*/false, /*create=*/true));
  return folder;
}

absl::Status RemoveEndedFolders(const std::string& root,
                                const std::string& project, pid_t ended_run) {
  std::string prefix = absl::StrCat(ProjectHash(project), "-");
  const std::string ended_prefix =
      ended_run > 0 ? absl::StrCat(prefix, ended_run, "-") : std::string();
  DIR* dir = ::opendir(root.c_str());
  if (dir == nullptr)
    return LastErrnoStatus(absl::StrCat("opendir(", root, ")"));
  std::vector<std::string> candidates;
  while (struct dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (!absl::StartsWith(name, prefix)) continue;
    if (absl::StartsWith(name.substr(prefix.size()), "session-")) continue;
    candidates.push_back(name);
  }
  ::closedir(dir);
  for (const std::string& name : candidates) {
    std::string path = JoinPath(root, name);
    absl::StatusOr<UniqueFd> lock =
        LockFolder(path, /*wait=*/false, /*create=*/false);
    if (!lock.ok()) {
      if (absl::IsUnavailable(lock.status())) continue;  // a live process
      // No lock file: a start that failed half way, or one that is being
      // made right now (the lock file follows the folder at once). Only a
      // folder older than a minute is taken as left over.
      const bool made_by_ended_run =
          !ended_prefix.empty() && absl::StartsWith(name, ended_prefix);
      struct stat st;
      if (!made_by_ended_run && (::stat(path.c_str(), &st) != 0 ||
                                 st.st_mtime > ::time(nullptr) - 60)) {
        continue;
      }
    }
    RETURN_IF_ERROR(RemoveTree(path));
  }
  return absl::OkStatus();
}

UniqueFd OpenSubfolder(int parent, const std::string& name) {
  return UniqueFd(::openat(parent, name.c_str(),
                           O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

absl::StatusOr<std::vector<std::string>> FolderNames(int fd,
                                                     const std::string& shown) {
  int copy = ::openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* dir = copy >= 0 ? ::fdopendir(copy) : nullptr;
  if (dir == nullptr) {
    if (copy >= 0) ::close(copy);
    return LastErrnoStatus(absl::StrCat("opendir(", shown, ")"));
  }
  std::vector<std::string> names;
  errno = 0;
  while (struct dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
    errno = 0;
  }
  int error = errno;
  ::closedir(dir);
  if (error != 0)
    return ErrnoStatus(error, absl::StrCat("readdir(", shown, ")"));
  return names;
}

absl::Status RemoveTree(const std::string& path) {
  UniqueFd fd(
      ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) {
    if (errno == ENOENT) return absl::OkStatus();
    if (errno == ENOTDIR || errno == ELOOP) {
      if (::unlink(path.c_str()) == 0) return absl::OkStatus();
    }
    return LastErrnoStatus(absl::StrCat("open(", path, ")"));
  }
  RETURN_IF_ERROR(RemoveContent(fd.get(), path, /*parallel=*/true));
  if (::rmdir(path.c_str()) != 0 && errno != ENOENT) {
    return LastErrnoStatus(absl::StrCat("rmdir(", path, ")"));
  }
  return absl::OkStatus();
}

}  // namespace garuda
