#include "lib/lockdown/landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"

// Debian 12's headers (Linux 6.1) stop at ABI 2. The values are kernel ABI
// and never change, so the newer rights are named here when the header lacks
// them; a kernel that does not know one is never asked to handle it.
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#ifndef LANDLOCK_RULE_NET_PORT
#define LANDLOCK_RULE_NET_PORT 2
struct landlock_net_port_attr {
  __u64 allowed_access;
  __u64 port;
} __attribute__((packed));
#endif
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif

namespace garuda {
namespace {

// landlock_ruleset_attr as of ABI 4; the kernel reads only `size` bytes, so
// a ruleset without network rights passes the ABI 1 size.
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
};
constexpr size_t kRulesetAttrSizeAbi1 = sizeof(uint64_t);
constexpr int kLandlockNetAbi = 4;

int CreateRuleset(const RulesetAttr* attr, size_t size, uint32_t flags) {
  return static_cast<int>(
      syscall(SYS_landlock_create_ruleset, attr, size, flags));
}

// Rights that make sense on a single file rather than a folder.
constexpr uint64_t kFileRights =
    LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
    LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE;

}  // namespace

absl::StatusOr<int> LandlockAbiVersion() {
  int abi = CreateRuleset(nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi >= 0) return abi;
  if (errno == ENOSYS || errno == EOPNOTSUPP) return 0;
  return LastErrnoStatus("landlock_create_ruleset(VERSION)");
}

uint64_t LandlockWriteRights(int abi) {
  if (abi < 1) return 0;
  uint64_t rights =
      LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
      LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
      LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
      LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
      LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
  if (abi >= 2) rights |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) rights |= LANDLOCK_ACCESS_FS_TRUNCATE;
  return rights;
}

uint64_t LandlockReadRights() {
  return LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE |
         LANDLOCK_ACCESS_FS_READ_DIR;
}

std::string LandlockGaps(int abi) {
  if (abi < 1) return "Landlock is missing: writes are not confined";
  std::string gaps;
  if (abi < 2) {
    gaps +=
        "ABI 1: renaming or linking a file into another folder is always "
        "refused (EXDEV), even beneath writable paths; ";
  }
  if (abi < 3) {
    gaps +=
        "ABI < 3: truncate(2)/ftruncate(2) on a path outside the writable "
        "paths is not refused; ";
  }
  gaps +=
      "never covered: chmod, chown, setxattr, utime (metadata), and files "
      "opened before Enforce()";
  return gaps;
}

LandlockRuleset::LandlockRuleset(int kernel_abi, int min_abi, bool handle_reads)
    : kernel_abi_(kernel_abi),
      abi_(std::min(kernel_abi, kLandlockNewestKnownAbi)) {
  if (kernel_abi < min_abi) {
    status_ = absl::FailedPreconditionError(absl::StrCat(
        "the kernel's Landlock ABI is ", kernel_abi, ", at least ", min_abi,
        " is needed (Linux 5.13 or newer with \"landlock\" in the lsm= boot "
        "parameter or CONFIG_LSM)"));
    return;
  }
  handled_ = LandlockWriteRights(abi_);
  if (handle_reads) handled_ |= LandlockReadRights();
}

LandlockRuleset LandlockRuleset::ForWritesWithAbi(int kernel_abi, int min_abi) {
  return LandlockRuleset(kernel_abi, min_abi, /*handle_reads=*/false);
}

LandlockRuleset LandlockRuleset::ForReadsAndWritesWithAbi(int kernel_abi,
                                                          int min_abi) {
  return LandlockRuleset(kernel_abi, min_abi, /*handle_reads=*/true);
}

LandlockRuleset LandlockRuleset::ForWrites(int min_abi) {
  absl::StatusOr<int> abi = LandlockAbiVersion();
  LandlockRuleset ruleset = ForWritesWithAbi(abi.ok() ? *abi : 0, min_abi);
  if (!abi.ok()) ruleset.status_ = abi.status();
  return ruleset;
}

LandlockRuleset LandlockRuleset::ForReadsAndWrites(int min_abi) {
  absl::StatusOr<int> abi = LandlockAbiVersion();
  LandlockRuleset ruleset =
      ForReadsAndWritesWithAbi(abi.ok() ? *abi : 0, min_abi);
  if (!abi.ok()) ruleset.status_ = abi.status();
  return ruleset;
}

void LandlockRuleset::AddRule(const std::string& path, uint64_t rights) {
  if (!status_.ok()) return;
  if (path.empty() || path[0] != '/') {
    status_ = absl::InvalidArgumentError(
        absl::StrCat("Landlock rule path \"", path, "\" must be absolute"));
    return;
  }
  rules_.push_back({path, rights});
}

LandlockRuleset& LandlockRuleset::AllowWritesBeneath(const std::string& path) {
  AddRule(path, LandlockWriteRights(abi_));
  return *this;
}

LandlockRuleset& LandlockRuleset::AllowReadsBeneath(const std::string& path) {
  if ((handled_ & LandlockReadRights()) != 0) {
    AddRule(path, LandlockReadRights());
  }
  return *this;
}

LandlockRuleset& LandlockRuleset::DenyTcp() {
  if (kernel_abi_ >= kLandlockNetAbi) {
    handled_net_ =
        LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
  }
  return *this;
}

LandlockRuleset& LandlockRuleset::AllowTcpConnect(int port) {
  if (!status_.ok()) return *this;
  if (port < 1 || port > 65535) {
    status_ = absl::InvalidArgumentError(
        absl::StrCat("Landlock TCP port ", port, " is not in 1..65535"));
    return *this;
  }
  DenyTcp();
  if (handled_net_ != 0) tcp_connect_ports_.push_back(port);
  return *this;
}

absl::Status LandlockRuleset::Enforce() {
  RETURN_IF_ERROR(status_);
  if (abi_ < 1) {
    return absl::FailedPreconditionError(
        "the kernel has no Landlock: nothing to enforce");
  }
  RulesetAttr attr = {};
  attr.handled_access_fs = handled_;
  attr.handled_access_net = handled_net_;
  // Handling TCP refuses all of it but the ports AllowTcpConnect named.
  UniqueFd ruleset(CreateRuleset(
      &attr, handled_net_ != 0 ? sizeof(attr) : kRulesetAttrSizeAbi1, 0));
  if (!ruleset) return LastErrnoStatus("landlock_create_ruleset");
  // A path named twice (for reads and for writes) is two rules; Landlock
  // adds their rights up.
  for (const Rule& rule : rules_) {
    // O_PATH: the descriptor only names the place; nothing is opened for
    // reading or writing.
    ASSIGN_OR_RETURN(UniqueFd place, OpenFile(rule.path, O_PATH | O_CLOEXEC));
    struct stat info;
    if (fstat(place.get(), &info) != 0) {
      return LastErrnoStatus(absl::StrCat("fstat(", rule.path, ")"));
    }
    landlock_path_beneath_attr beneath = {};
    beneath.allowed_access = rule.rights & handled_;
    if (!S_ISDIR(info.st_mode)) beneath.allowed_access &= kFileRights;
    beneath.parent_fd = place.get();
    if (beneath.allowed_access == 0) continue;
    if (syscall(SYS_landlock_add_rule, ruleset.get(),
                LANDLOCK_RULE_PATH_BENEATH, &beneath, 0) != 0) {
      return LastErrnoStatus(
          absl::StrCat("landlock_add_rule(", rule.path, ")"));
    }
  }
  for (int port : tcp_connect_ports_) {
    landlock_net_port_attr net = {};
    net.allowed_access = LANDLOCK_ACCESS_NET_CONNECT_TCP;
    net.port = static_cast<uint64_t>(port);
    if (syscall(SYS_landlock_add_rule, ruleset.get(), LANDLOCK_RULE_NET_PORT,
                &net, 0) != 0) {
      return LastErrnoStatus(
          absl::StrCat("landlock_add_rule(TCP connect to port ", port, ")"));
    }
  }
  // Safe: no_new_privs only takes away the gain of privileges on exec
  // (setuid bits, file capabilities), and the kernel requires it before an
  // unprivileged process may restrict itself.
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return LastErrnoStatus("prctl(PR_SET_NO_NEW_PRIVS)");
  }
  // Safe: a Landlock domain only ever removes rights from this thread and
  // the processes it starts; nothing is granted.
  if (syscall(SYS_landlock_restrict_self, ruleset.get(), 0) != 0) {
    return LastErrnoStatus("landlock_restrict_self");
  }
  return absl::OkStatus();
}

}  // namespace garuda
