#include "lib/staging/tree_copy.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/changeset/beneath.h"
#include "lib/staging/folders.h"
#include "lib/staging/workers.h"

namespace garuda {
namespace {

// Once a clone or copy_file_range fails for a reason of the file system,
// the next files go the plain way without asking again (per process).
bool no_reflink = false;
bool no_copy_range = false;

bool SameStat(const struct stat& a, const struct stat& b) {
  return a.st_mode == b.st_mode && a.st_ino == b.st_ino &&
         a.st_dev == b.st_dev && a.st_size == b.st_size &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec &&
         a.st_mtim.tv_nsec == b.st_mtim.tv_nsec &&
         a.st_ctim.tv_sec == b.st_ctim.tv_sec &&
         a.st_ctim.tv_nsec == b.st_ctim.tv_nsec;
}

// What became of one regular file; in memory shared with the workers.
enum FileState : uint8_t { kPending = 0, kCopied, kReflinked, kGone };
struct FileResult {
  struct stat copy;  // the copy's, once finished
  uint8_t state;
  uint8_t steady;  // see CopiedPath::source_steady
};

// Copies `st.st_size` bytes of `in` to `out`: copy_file_range where it
// works, else read and write.
absl::Status CopyContent(int in, int out, const struct stat& st) {
  off_t left = st.st_size;
  static std::vector<char>* buffer = nullptr;
  while (left > 0) {
    ssize_t n;
    if (!no_copy_range) {
      n = ::copy_file_range(in, nullptr, out, nullptr,
                            static_cast<size_t>(left), 0);
      if (n < 0 &&
          (errno == EXDEV || errno == EOPNOTSUPP || errno == ENOSYS ||
           errno == EINVAL) &&
          left == st.st_size) {
        no_copy_range = true;  // another file system, say: read and write
        continue;
      }
    } else {
      if (buffer == nullptr) buffer = new std::vector<char>(1 << 17);
      n = ::read(in, buffer->data(),
                 std::min(buffer->size(), static_cast<size_t>(left)));
      if (n > 0) {
        RETURN_IF_ERROR(WriteAll(
            out, absl::string_view(buffer->data(), static_cast<size_t>(n))));
      }
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return LastErrnoStatus(no_copy_range ? "read" : "copy_file_range");
    }
    if (n == 0) break;  // the file shrank while being copied
    left -= n;
  }
  return absl::OkStatus();
}

// Copies the regular file `name` (listed with `st`) from the folder
// `from_dir` to `to_dir`, with its mode and times. A file gone since it
// was listed (or no longer a file) is kGone, and not copied. `shown` and
// `name` name it in errors.
absl::Status CopyOne(int from_dir, int to_dir, const std::string& name,
                     const struct stat& st, mode_t umask_bits,
                     const std::string& shown, FileResult* result) {
  UniqueFd in(::openat(from_dir, name.c_str(),
                       O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!in) {
    if (errno == ENOENT) {
      result->state = kGone;
      return absl::OkStatus();
    }
    return LastErrnoStatus(absl::StrCat("open(", JoinPath(shown, name), ")"));
  }
  // Created with its final permission bits where the umask keeps them (no
  // chmod then); the staging folder is 0700, so nobody else can open it
  // meanwhile.
  mode_t mode = st.st_mode & 07777;
  UniqueFd out(::openat(to_dir, name.c_str(),
                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        mode & 0777));
  if (!out) {
    return LastErrnoStatus(
        absl::StrCat("create copy of ", JoinPath(shown, name)));
  }
  result->state = kCopied;
  if (!no_reflink && ::ioctl(out.get(), FICLONE, in.get()) == 0) {
    result->state = kReflinked;
  } else {
    if (!no_reflink &&
        (errno == EOPNOTSUPP || errno == ENOTTY || errno == EXDEV)) {
      no_reflink = true;
    }
    absl::Status copied = CopyContent(in.get(), out.get(), st);
    if (!copied.ok()) {
      struct stat now;
      if (::fstat(in.get(), &now) == 0 && !S_ISREG(now.st_mode)) {
        // Replaced by a folder since it was listed: left to the refresh.
        ::unlinkat(to_dir, name.c_str(), 0);
        result->state = kGone;
        return absl::OkStatus();
      }
      return absl::Status(
          copied.code(),
          absl::StrCat("copy ", JoinPath(shown, name), ": ", copied.message()));
    }
  }
  if ((mode & 0777 & ~umask_bits) != mode && ::fchmod(out.get(), mode) != 0) {
    return LastErrnoStatus(
        absl::StrCat("chmod copy of ", JoinPath(shown, name)));
  }
  struct timespec times[2] = {st.st_atim, st.st_mtim};
  struct stat after;
  if (::futimens(out.get(), times) != 0 ||
      ::fstat(out.get(), &result->copy) != 0 ||
      ::fstat(in.get(), &after) != 0) {
    return LastErrnoStatus(
        absl::StrCat("set the times of the copy of ", JoinPath(shown, name)));
  }
  result->steady = SameStat(st, after) ? 1 : 0;
  return absl::OkStatus();
}

// A folder of the tree; [0] is the root.
struct FolderJob {
  std::string relative;  // "" is the root
  struct stat st;
};

// A regular file to copy, found by the folder pass.
struct FileJob {
  uint32_t folder;  // index in Plan::folders
  std::string name;
  struct stat st;
};

struct Plan {
  std::vector<FolderJob> folders;  // parents before their children
  std::vector<FileJob> files;      // in walk order
  std::vector<CopiedPath> links;   // made by the folder pass
  std::string first_file;          // of `from`, for ReflinkWorks
};

// The folder pass: lists `from` (folder `index` of the plan), makes its
// folders and links in `to`, lists its files. Stops past the file limit.
absl::Status MakeFolders(int from, int to, uint32_t index,
                         const std::string& root, const CopyLimits& limits,
                         Plan* plan, CopyStats* stats, CopyRefusal* refused) {
  std::string relative = plan->folders[index].relative;
  std::string shown = JoinPath(root, relative);
  ASSIGN_OR_RETURN(std::vector<std::string> names, FolderNames(from, shown));
  for (std::string& name : names) {
    struct stat st;
    if (::fstatat(from, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      // Gone since the folder was listed (git gc packing objects, say):
      // the copy shows the tree without it, as a later listing would.
      if (errno == ENOENT) continue;
      return LastErrnoStatus(absl::StrCat("stat(", JoinPath(shown, name), ")"));
    }
    if (++stats->paths > limits.files && limits.files != 0) {
      *refused = CopyRefusal::kFiles;
      return absl::FailedPreconditionError(
          absl::StrCat("more than ", limits.files, " files"));
    }
    if (S_ISREG(st.st_mode)) {
      stats->bytes += static_cast<uint64_t>(st.st_size);
      if (plan->first_file.empty()) plan->first_file = JoinPath(shown, name);
      plan->files.push_back({index, std::move(name), st});
      continue;
    }
    std::string child =
        relative.empty() ? name : absl::StrCat(relative, "/", name);
    if (S_ISDIR(st.st_mode)) {
      UniqueFd sub_from = OpenSubfolder(from, name);
      if (!sub_from && errno == ENOENT) continue;  // gone, as above
      if (::mkdirat(to, name.c_str(), 0700) != 0) {
        return LastErrnoStatus(
            absl::StrCat("mkdir copy of ", JoinPath(root, child)));
      }
      UniqueFd sub_to = OpenSubfolder(to, name);
      if (!sub_from || !sub_to) {
        return LastErrnoStatus(
            absl::StrCat("open(", JoinPath(root, child), ")"));
      }
      uint32_t sub = static_cast<uint32_t>(plan->folders.size());
      plan->folders.push_back({std::move(child), st});
      RETURN_IF_ERROR(MakeFolders(sub_from.get(), sub_to.get(), sub, root,
                                  limits, plan, stats, refused));
    } else if (S_ISLNK(st.st_mode)) {
      std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
      ssize_t n =
          ::readlinkat(from, name.c_str(), target.data(), target.size());
      if (n < 0 && errno == ENOENT) continue;  // gone, as above
      if (n < 0) {
        return LastErrnoStatus(
            absl::StrCat("readlink(", JoinPath(root, child), ")"));
      }
      target.resize(static_cast<size_t>(n));
      if (::symlinkat(target.c_str(), to, name.c_str()) != 0) {
        return LastErrnoStatus(
            absl::StrCat("symlink copy of ", JoinPath(root, child)));
      }
      CopiedPath link;
      link.relative = std::move(child);
      link.source = st;
      link.source_steady = true;
      if (::fstatat(to, name.c_str(), &link.copy, AT_SYMLINK_NOFOLLOW) != 0) {
        return LastErrnoStatus(
            absl::StrCat("stat copy of ", JoinPath(root, link.relative)));
      }
      plan->links.push_back(std::move(link));
    } else {
      ++stats->skipped_special;
    }
  }
  return absl::OkStatus();
}

// Files are handed out in chunks of at most this many, of one folder each
// (two processes creating files in one folder wait for its lock).
constexpr size_t kChunkFiles = 256;

struct Chunk {
  size_t first, end;  // indices in Plan::files
};

std::vector<Chunk> MakeChunks(const Plan& plan) {
  std::vector<Chunk> chunks;
  size_t first = 0;
  for (size_t i = 1; i <= plan.files.size(); ++i) {
    if (i == plan.files.size() || i - first == kChunkFiles ||
        plan.files[i].folder != plan.files[first].folder) {
      chunks.push_back({first, i});
      first = i;
    }
  }
  return chunks;
}

// Shared by the processes of one copy: which chunk comes next, and whether
// one of them failed (the others then stop early). FileResults follow it.
struct Shared {
  std::atomic<uint32_t> next_chunk;
  std::atomic<uint32_t> failed;
};

// Takes chunks until none is left (or another process failed) and copies
// their files, never through a link (the folders were made by the folder
// pass and are opened beneath the roots).
absl::Status CopyChunks(int from_root, int to_root, const std::string& root,
                        const Plan& plan, const std::vector<Chunk>& chunks,
                        mode_t umask_bits, Shared* shared,
                        FileResult* results) {
  for (;;) {
    if (shared->failed.load() != 0) return absl::OkStatus();
    uint32_t next = shared->next_chunk.fetch_add(1);
    if (next >= chunks.size()) return absl::OkStatus();
    const Chunk& chunk = chunks[next];
    const FolderJob& folder = plan.folders[plan.files[chunk.first].folder];
    UniqueFd from_dir, to_dir;
    int from_fd = from_root, to_fd = to_root;
    if (!folder.relative.empty()) {
      absl::StatusOr<UniqueFd> from =
          OpenBeneath(from_root, folder.relative, O_RDONLY | O_DIRECTORY);
      if (absl::IsNotFound(from.status())) {
        for (size_t i = chunk.first; i < chunk.end; ++i) {
          results[i].state = kGone;  // the folder went: as a file that went
        }
        continue;
      }
      RETURN_IF_ERROR(from.status());
      ASSIGN_OR_RETURN(UniqueFd to, OpenBeneath(to_root, folder.relative,
                                                O_RDONLY | O_DIRECTORY));
      from_dir = *std::move(from);
      to_dir = std::move(to);
      from_fd = from_dir.get();
      to_fd = to_dir.get();
    }
    std::string shown = JoinPath(root, folder.relative);
    for (size_t i = chunk.first; i < chunk.end; ++i) {
      const FileJob& job = plan.files[i];
      RETURN_IF_ERROR(CopyOne(from_fd, to_fd, job.name, job.st, umask_bits,
                              shown, &results[i]));
    }
  }
}

// Below this many files one process copies them all.
constexpr size_t kParallelFiles = 1000;
// Processes in all, this one included.
constexpr size_t kWorkers = 4;

// The file pass, in kWorkers processes (see workers.h).
absl::Status CopyFiles(int from_root, int to_root, const std::string& root,
                       const std::string& to, const Plan& plan,
                       FileResult* results_out) {
  std::vector<Chunk> chunks = MakeChunks(plan);
  mode_t umask_bits = ::umask(0);
  ::umask(umask_bits);
  SharedMemory memory(sizeof(Shared) + plan.files.size() * sizeof(FileResult));
  if (!memory.ok()) return LastErrnoStatus("mmap for the copy workers");
  Shared* shared = static_cast<Shared*>(memory.data());
  FileResult* results = reinterpret_cast<FileResult*>(
      static_cast<char*>(memory.data()) + sizeof(Shared));
  absl::Status copied = RunInProcesses(
      plan.files.size() < kParallelFiles ? 1 : kWorkers,
      [&] {
        return CopyChunks(from_root, to_root, root, plan, chunks, umask_bits,
                          shared, results);
      },
      &shared->failed,
      // A forked worker writes only beneath the copy it makes.
      [&to] { return ConfineWritesBeneath(to); });
  if (!copied.ok()) {
    return absl::Status(copied.code(),
                        absl::StrCat("copy of ", root, ": ", copied.message()));
  }
  std::memcpy(static_cast<void*>(results_out), results,
              plan.files.size() * sizeof(FileResult));
  return absl::OkStatus();
}

// Gives the folders below the root their modes and times, deepest first
// (a new file changes its folder's mtime), and the root its mode.
absl::Status FinishFolders(int to_root, const Plan& plan, const std::string& to,
                           std::vector<CopiedPath>* paths) {
  for (size_t i = plan.folders.size(); i-- > 0;) {
    const FolderJob& folder = plan.folders[i];
    UniqueFd opened;
    int fd = to_root;
    if (!folder.relative.empty()) {
      ASSIGN_OR_RETURN(opened, OpenBeneath(to_root, folder.relative,
                                           O_RDONLY | O_DIRECTORY));
      fd = opened.get();
    }
    std::string shown = JoinPath(to, folder.relative);
    if ((folder.st.st_mode & 07777) != 0700 &&
        ::fchmod(fd, folder.st.st_mode & 07777) != 0) {
      return LastErrnoStatus(absl::StrCat("chmod(", shown, ")"));
    }
    if (!folder.relative.empty()) {
      struct timespec times[2] = {folder.st.st_atim, folder.st.st_mtim};
      if (::futimens(fd, times) != 0) {
        return LastErrnoStatus(absl::StrCat("set the times of ", shown));
      }
    }
    if (paths != nullptr) {
      CopiedPath path;
      path.relative = folder.relative;
      path.source = folder.st;
      if (::fstat(fd, &path.copy) != 0) {
        return LastErrnoStatus(absl::StrCat("stat(", shown, ")"));
      }
      paths->push_back(std::move(path));
    }
  }
  return absl::OkStatus();
}

absl::Status CopyFolder(const std::string& from, const std::string& to,
                        const CopyLimits& limits, CopyStats* stats,
                        std::vector<CopiedPath>* paths, CopyRefusal* refused) {
  UniqueFd from_fd(::open(from.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!from_fd) return LastErrnoStatus(absl::StrCat("open(", from, ")"));
  Plan plan;
  plan.folders.push_back({"", {}});
  if (::fstat(from_fd.get(), &plan.folders[0].st) != 0) {
    return LastErrnoStatus(absl::StrCat("stat(", from, ")"));
  }
  if (::mkdir(to.c_str(), 0700) != 0) {
    return LastErrnoStatus(absl::StrCat("mkdir(", to, ")"));
  }
  UniqueFd to_fd(
      ::open(to.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!to_fd) return LastErrnoStatus(absl::StrCat("open(", to, ")"));
  RETURN_IF_ERROR(MakeFolders(from_fd.get(), to_fd.get(), 0, from, limits,
                              &plan, stats, refused));
  if (limits.bytes != 0 && stats->bytes > limits.bytes &&
      !ReflinkWorks(plan.first_file, Dirname(to))) {
    *refused = CopyRefusal::kBytes;
    return absl::FailedPreconditionError(
        absl::StrCat("more than ", limits.bytes, " bytes and no reflink"));
  }
  std::vector<FileResult> results(plan.files.size());
  RETURN_IF_ERROR(
      CopyFiles(from_fd.get(), to_fd.get(), from, to, plan, results.data()));
  for (const FileResult& result : results) {
    if (result.state == kReflinked) ++stats->reflinked;
    if (result.state == kCopied) ++stats->copied;
  }
  if (paths != nullptr) {
    paths->reserve(plan.folders.size() + plan.files.size() + plan.links.size());
    for (size_t i = 0; i < plan.files.size(); ++i) {
      if (results[i].state != kCopied && results[i].state != kReflinked) {
        continue;
      }
      const FileJob& job = plan.files[i];
      const std::string& folder = plan.folders[job.folder].relative;
      CopiedPath path;
      path.relative =
          folder.empty() ? job.name : absl::StrCat(folder, "/", job.name);
      path.source = job.st;
      path.copy = results[i].copy;
      path.source_steady = results[i].steady != 0;
      paths->push_back(std::move(path));
    }
    for (CopiedPath& link : plan.links) paths->push_back(std::move(link));
  }
  return FinishFolders(to_fd.get(), plan, to, paths);
}

}  // namespace

bool ReflinkWorks(const std::string& file, const std::string& into) {
  UniqueFd in(::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  std::string probe = JoinPath(into, "reflink-probe");
  UniqueFd out(::open(probe.c_str(),
                      O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                      0600));
  bool works = in && out && ::ioctl(out.get(), FICLONE, in.get()) == 0;
  ::unlink(probe.c_str());
  return works;
}

absl::Status CopyProjectTree(const std::string& from, const std::string& to,
                             const CopyLimits& limits, CopyStats* stats,
                             std::vector<CopiedPath>* paths,
                             CopyRefusal* refused) {
  *refused = CopyRefusal::kNone;
  *stats = CopyStats();  // the limits count this copy's paths
  absl::Status copied = CopyFolder(from, to, limits, stats, paths, refused);
  if (!copied.ok()) {
    // Nothing half made stays (past a limit: only folders and links).
    RemoveTree(to).IgnoreError();
  }
  return copied;
}

absl::Status CopyTree(const std::string& from, const std::string& to,
                      CopyStats* stats) {
  struct stat st;
  if (::lstat(from.c_str(), &st) != 0) {
    return LastErrnoStatus(absl::StrCat("stat(", from, ")"));
  }
  if (S_ISDIR(st.st_mode)) {
    CopyRefusal refused;
    return CopyFolder(from, to, CopyLimits(), stats, nullptr, &refused);
  }
  std::string base = Basename(to);
  if (Basename(from) != base) {
    return absl::InvalidArgumentError("CopyTree: a file keeps its name");
  }
  if (S_ISREG(st.st_mode)) {
    std::string from_parent_path = Dirname(from);
    std::string parent = Dirname(to);
    UniqueFd from_parent(
        ::open(from_parent_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!from_parent) {
      return LastErrnoStatus(absl::StrCat("open(", from_parent_path, ")"));
    }
    UniqueFd to_parent(
        ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!to_parent) return LastErrnoStatus(absl::StrCat("open(", parent, ")"));
    mode_t umask_bits = ::umask(0);
    ::umask(umask_bits);
    FileResult result = {};
    RETURN_IF_ERROR(CopyOne(from_parent.get(), to_parent.get(), base, st,
                            umask_bits, from_parent_path, &result));
    if (result.state == kReflinked) ++stats->reflinked;
    if (result.state == kCopied) ++stats->copied;
    return absl::OkStatus();
  }
  if (S_ISLNK(st.st_mode)) {
    std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
    ssize_t n = ::readlink(from.c_str(), target.data(), target.size());
    if (n < 0) return LastErrnoStatus(absl::StrCat("readlink(", from, ")"));
    target.resize(static_cast<size_t>(n));
    if (::symlink(target.c_str(), to.c_str()) != 0) {
      return LastErrnoStatus(absl::StrCat("symlink(", to, ")"));
    }
    return absl::OkStatus();
  }
  ++stats->skipped_special;
  return absl::OkStatus();
}

}  // namespace garuda
