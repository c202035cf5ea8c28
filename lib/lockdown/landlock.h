// Landlock through its system calls (Debian 12's glibc has no wrappers):
// a ruleset that handles every write-type access right of the best ABI both
// the kernel and this code know, with writes allowed only beneath chosen
// folders. Also used by sandbox/ for commands.
#ifndef GARUDA_LIB_LOCKDOWN_LANDLOCK_H_
#define GARUDA_LIB_LOCKDOWN_LANDLOCK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace garuda {

// The newest Landlock ABI this code handles rights of (3: truncate, Linux
// 6.2). A newer kernel is used at this level.
constexpr int kLandlockNewestKnownAbi = 3;

// The kernel's Landlock ABI version; 0 when it has none (not built in, or
// not in the lsm= list: ENOSYS / EOPNOTSUPP).
absl::StatusOr<int> LandlockAbiVersion();

// The write-type rights of `abi` (WRITE_FILE, REMOVE_*, MAKE_*, from ABI 2
// REFER, from ABI 3 TRUNCATE), and the read-type ones (EXECUTE, READ_FILE,
// READ_DIR).
uint64_t LandlockWriteRights(int abi);
uint64_t LandlockReadRights();

// What Landlock at `abi` does not confine, in words, for reports and docs
// ("truncate(2) ..." below ABI 3). Empty when nothing is missing that this
// code knows of.
std::string LandlockGaps(int abi);

// Sticky errors: the first failure (a missing path, a kernel below the
// minimum ABI) is kept and comes out of Enforce().
class LandlockRuleset {
 public:
  // Handles every write-type right of the kernel's ABI (capped at
  // kLandlockNewestKnownAbi); reads stay unrestricted. Enforce() fails when
  // the kernel's ABI is below `min_abi`.
  static LandlockRuleset ForWrites(int min_abi);
  // Also handles reads (EXECUTE, READ_FILE, READ_DIR): then only what
  // AllowReadsBeneath names can be read or run.
  static LandlockRuleset ForReadsAndWrites(int min_abi);
  // The same with the kernel's ABI given rather than probed (tests; a
  // caller that probed already).
  static LandlockRuleset ForWritesWithAbi(int kernel_abi, int min_abi);
  static LandlockRuleset ForReadsAndWritesWithAbi(int kernel_abi, int min_abi);

  // Creating, changing, removing and renaming files beneath `path` (a folder,
  // or a single file: then writing and truncating it). The path must exist.
  LandlockRuleset& AllowWritesBeneath(const std::string& path);
  // Reading, listing and running beneath `path`; a no-op for a ruleset that
  // does not handle reads.
  LandlockRuleset& AllowReadsBeneath(const std::string& path);
  // Also refuses TCP bind and connect (EACCES) when the kernel's ABI is 4
  // (Linux 6.7) or newer; a no-op below, where the seccomp filter is the
  // only wall. tcp_denied() says whether it will hold.
  LandlockRuleset& DenyTcp();
  // Like DenyTcp, except that connecting to TCP `port` (1..65535) stays
  // allowed; call it once per port. A no-op below ABI 4.
  LandlockRuleset& AllowTcpConnect(int port);
  bool tcp_denied() const { return handled_net_ != 0; }

  // The ABI the ruleset is built for (min(kernel, newest known)); 0 when the
  // kernel has none.
  int abi() const { return abi_; }

  // Sets no_new_privs if it is not set, then restricts the calling thread
  // and its future children for good. Landlock restricts only the calling
  // thread: call it before any other thread starts.
  absl::Status Enforce();

 private:
  struct Rule {
    std::string path;
    uint64_t rights;
  };
  LandlockRuleset(int kernel_abi, int min_abi, bool handle_reads);
  void AddRule(const std::string& path, uint64_t rights);

  int kernel_abi_ = 0;
  int abi_ = 0;
  uint64_t handled_ = 0;
  uint64_t handled_net_ = 0;
  absl::Status status_;
  std::vector<Rule> rules_;
  std::vector<int> tcp_connect_ports_;
};

}  // namespace garuda

#endif  // GARUDA_LIB_LOCKDOWN_LANDLOCK_H_
