#include "lib/staging/copy_snapshot.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"

namespace garuda {
namespace {

constexpr char kMagic[] = "garuda-copy-snapshot-v2\n";

void Put(std::string* out, const void* data, size_t size) {
  out->append(static_cast<const char*>(data), size);
}

void PutKey(std::string* out, const StatKey& key) {
  Put(out, &key.mode, sizeof(key.mode));
  Put(out, &key.inode, sizeof(key.inode));
  Put(out, &key.size, sizeof(key.size));
  Put(out, &key.mtime_ns, sizeof(key.mtime_ns));
  Put(out, &key.ctime_ns, sizeof(key.ctime_ns));
}

class Reader {
 public:
  explicit Reader(absl::string_view data) : data_(data) {}
  bool Get(void* out, size_t size) {
    if (data_.size() < size) return false;
    std::memcpy(out, data_.data(), size);
    data_.remove_prefix(size);
    return true;
  }
  bool GetKey(StatKey* key) {
    return Get(&key->mode, sizeof(key->mode)) &&
           Get(&key->inode, sizeof(key->inode)) &&
           Get(&key->size, sizeof(key->size)) &&
           Get(&key->mtime_ns, sizeof(key->mtime_ns)) &&
           Get(&key->ctime_ns, sizeof(key->ctime_ns));
  }
  bool GetString(std::string* out, size_t size) {
    if (data_.size() < size) return false;
    out->assign(data_.data(), size);
    data_.remove_prefix(size);
    return true;
  }
  bool done() const { return data_.empty(); }

 private:
  absl::string_view data_;
};

}  // namespace

std::string ChildPath(const std::string& parent, const std::string& name) {
  return parent.empty() ? name : absl::StrCat(parent, "/", name);
}

std::string ParentPath(const std::string& relative, std::string* name) {
  size_t slash = relative.rfind('/');
  if (slash == std::string::npos) {
    *name = relative;
    return "";
  }
  *name = relative.substr(slash + 1);
  return relative.substr(0, slash);
}

int64_t TimespecNanoseconds(const struct timespec& t) {
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

void WaitForClockPast(int64_t newest_ctime_ns) {
  for (;;) {
    struct timespec now;
    ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
    if (TimespecNanoseconds(now) > newest_ctime_ns) return;
    struct timespec pause = {0, 1000000};
    ::nanosleep(&pause, nullptr);
  }
}

StatKey StatKey::Of(const struct stat& st) {
  StatKey key;
  key.mode = st.st_mode;
  key.inode = st.st_ino;
  key.size = static_cast<uint64_t>(st.st_size);
  key.mtime_ns = TimespecNanoseconds(st.st_mtim);
  key.ctime_ns = TimespecNanoseconds(st.st_ctim);
  return key;
}

absl::StatusOr<CopySnapshot> CopySnapshot::Load(const std::string& file) {
  CopySnapshot snapshot;
  absl::StatusOr<std::string> data = ReadFileToString(file);
  if (absl::IsNotFound(data.status())) return snapshot;
  RETURN_IF_ERROR(data.status());
  absl::string_view rest = *data;
  if (rest.substr(0, sizeof(kMagic) - 1) != kMagic) {
    return absl::DataLossError(
        absl::StrCat(file, " is not a copy snapshot (", kMagic, ")"));
  }
  rest.remove_prefix(sizeof(kMagic) - 1);
  Reader reader(rest);
  uint64_t count = 0;
  if (!reader.Get(&count, sizeof(count))) {
    return absl::DataLossError(absl::StrCat(file, " is truncated"));
  }
  snapshot.entries_.reserve(count);
  while (!reader.done()) {
    uint32_t length = 0;
    uint8_t paired = 0;
    std::string path;
    Entry entry;
    if (!reader.Get(&length, sizeof(length)) ||
        !reader.GetString(&path, length) ||
        !reader.Get(&paired, sizeof(paired)) || !reader.GetKey(&entry.copy) ||
        (paired != 0 && !reader.GetKey(&entry.project))) {
      return absl::DataLossError(absl::StrCat(file, " is truncated"));
    }
    entry.paired = paired != 0;
    snapshot.entries_[std::move(path)] = entry;
  }
  return snapshot;
}

absl::Status CopySnapshot::Save(const std::string& file) const {
  std::string data = kMagic;
  data.reserve(entries_.size() * 110);
  uint64_t count = entries_.size();
  Put(&data, &count, sizeof(count));
  for (const auto& [path, entry] : entries_) {
    uint32_t length = static_cast<uint32_t>(path.size());
    uint8_t paired = entry.paired ? 1 : 0;
    Put(&data, &length, sizeof(length));
    data += path;
    Put(&data, &paired, sizeof(paired));
    PutKey(&data, entry.copy);
    if (entry.paired) PutKey(&data, entry.project);
  }
  // No fsync: after a crash a lost or older snapshot only means that more
  // paths get compared; it never makes a changed path look unchanged,
  // because every path it names has changed ctimes since. (Whether the
  // copy's side may be trusted without a walk is a separate marker, made
  // only after this file is in place; see backend.cc.)
  std::string temporary = absl::StrCat(file, ".tmp");
  {
    ASSIGN_OR_RETURN(UniqueFd fd,
                     OpenFile(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0600));
    RETURN_IF_ERROR(WriteAll(fd.get(), data));
  }
  if (::rename(temporary.c_str(), file.c_str()) != 0) {
    return LastErrnoStatus(absl::StrCat("rename(", temporary, ")"));
  }
  return absl::OkStatus();
}

bool CopySnapshot::KnownSame(const std::string& relative,
                             const struct stat* project,
                             const struct stat& copy) const {
  auto it = entries_.find(relative);
  if (it == entries_.end() || !it->second.paired ||
      !(it->second.copy == StatKey::Of(copy))) {
    return false;
  }
  return project == nullptr ? it->second.project.mode == 0
                            : it->second.project == StatKey::Of(*project);
}

bool CopySnapshot::CopyUnchanged(const std::string& relative,
                                 const struct stat& copy) const {
  auto it = entries_.find(relative);
  return it != entries_.end() && it->second.copy == StatKey::Of(copy);
}

void CopySnapshot::Record(const std::string& relative,
                          const struct stat& project, const struct stat& copy) {
  Entry entry;
  if (project.st_mode != 0) entry.project = StatKey::Of(project);
  entry.copy = StatKey::Of(copy);
  entry.paired = true;
  entries_[relative] = entry;
}

void CopySnapshot::Erase(const std::string& relative) {
  auto it = entries_.find(relative);
  if (it == entries_.end()) return;
  bool folder = S_ISDIR(it->second.copy.mode);
  entries_.erase(it);
  if (!folder) return;
  std::string prefix = relative.empty() ? "" : relative + "/";
  for (auto next = entries_.begin(); next != entries_.end();) {
    if (next->first.compare(0, prefix.size(), prefix) == 0) {
      next = entries_.erase(next);
    } else {
      ++next;
    }
  }
}

void CopySnapshot::RecordCopy(const std::string& relative,
                              const struct stat& copy) {
  Entry entry;
  entry.copy = StatKey::Of(copy);
  entries_[relative] = entry;
}

}  // namespace garuda
