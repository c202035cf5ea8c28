#include "lib/lockdown/roles.h"

#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/status_macros.h"
#include "lib/lockdown/landlock.h"

namespace garuda {
namespace {

// What Landlock confines for a role.
enum class Writes {
  kNothing,     // no path at all: every write, create, remove is refused
  kGiven,       // only beneath RoleNeeds::writable_paths (at least one)
  kUpTo,        // beneath RoleNeeds::writable_paths, which may be none
  kNoLandlock,  // by design: see RoleRow::no_landlock_why
};

enum class Network {
  kNone,     // AF_UNIX only
  kAny,      // the seccomp filter's network-on variant, no port limit
  kByPorts,  // TCP connect only to RoleNeeds::tcp_connect_ports; none: off
};

// One row per role. `also_writable`: paths the role always keeps (when they
// exist); `also_ports`: ports it always keeps.
struct RoleRow {
  Role role;
  const char* name;
  const char* seccomp_policy;  // policies/seccomp/<name>.json
  Writes writes;
  Network network;
  const char* no_landlock_why;
  std::vector<std::string> also_writable;
  std::vector<int> also_ports;
  // What stays possible, for the summary line.
  const char* after;
};

const std::vector<RoleRow>& RoleTable() {
  static const auto* table = new std::vector<RoleRow>{
      {Role::kAuditor,
       "auditor",
       "auditor",
       Writes::kGiven,
       Network::kNone,
       nullptr,
       {},
       {},
       "writes only its audit folder, no network, no exec"},
      {Role::kBudgeter,
       "budgeter",
       "budgeter",
       Writes::kGiven,
       Network::kNone,
       nullptr,
       {},
       {},
       "writes only the session folder, no network, no exec"},
      // show, diff-dirs and undo --list write nothing; apply and undo the
      // project and the undo store.
      {Role::kApplier,
       "applier",
       "applier",
       Writes::kUpTo,
       Network::kNone,
       nullptr,
       {},
       {},
       "writes only the project and the undo store, no "
       "network, no exec"},
      // The auditor's filter fits: verify and witness never start a
      // program, and what they write (a witness store) is open already.
      {Role::kAudit,
       "audit reader",
       "auditor",
       Writes::kNothing,
       Network::kNone,
       nullptr,
       {},
       {},
       "no file writes, no network, no exec"},
      {Role::kCodeTools,
       "code tools",
       "code_tools",
       Writes::kNothing,
       Network::kNone,
       nullptr,
       {},
       {},
       "no file writes, no network, no programs start"},
      // A language server's stderr goes to /dev/null, opened for writing.
      {Role::kCodeToolsLsp,
       "code tools",
       "code_tools_lsp",
       Writes::kNothing,
       Network::kNone,
       nullptr,
       {"/dev/null"},
       {},
       "no file writes, no network, only the configured language servers "
       "start"},
      // The terminal the questions are asked on, and the usual sink.
      {Role::kAgent,
       "agent",
       "agent",
       Writes::kGiven,
       Network::kByPorts,
       nullptr,
       {"/dev/tty", "/dev/null"},
       {},
       "writes only its session folder, history and terminal"},
      {Role::kAcpFront,
       "acp front",
       "agent",
       Writes::kNothing,
       Network::kNone,
       nullptr,
       {},
       {},
       "no file writes, no network, no new process"},
      // The filter is inherited by each sandbox: its PID 1 brings up
      // loopback over netlink, and a command with the network on opens IP
      // sockets; the sandbox's network namespace decides, not this filter.
      {Role::kStager,
       "stager",
       "stager",
       Writes::kNoLandlock,
       Network::kAny,
       "it mounts every command's sandbox, and a Landlock domain forbids "
       "mount(2); each command gets Landlock inside its sandbox",
       {},
       {},
       "builds sandboxes; no ptrace, keyring, bpf, modules"},
      // Not the folder of --out: it may hold the project.
      {Role::kStagingGuard,
       "staging guard",
       "stager",
       Writes::kGiven,
       Network::kNone,
       nullptr,
       {},
       {},
       "writes only the staging root, no network"},
      // TCP 53 too: the resolver falls back to TCP for a long answer.
      {Role::kProxy,
       "proxy",
       "proxy",
       Writes::kNothing,
       Network::kByPorts,
       nullptr,
       {},
       {53},
       "no file writes, TCP out to the allowed ports only"},
      // serve: its state folder, and the listening socket made before;
      // submit: the tree's witness folder, and TCP to the witness's port
      // (curl's handle is made before).
      {Role::kWitness,
       "witness",
       "witness",
       Writes::kGiven,
       Network::kByPorts,
       nullptr,
       {},
       {},
       "writes only its state folder, TCP out to the witness's port only "
       "(submit), no exec"},
  };
  return *table;
}

const RoleRow& RowOf(Role role) {
  for (const RoleRow& row : RoleTable()) {
    if (row.role == role) return row;
  }
  // Every enumerator has a row (roles_test checks); reaching here is a
  // programmer error.
  abort();
}

absl::StatusOr<LockdownOptions> OptionsFor(const RoleRow& row,
                                           const RoleNeeds& needs) {
  LockdownOptions options;
  options.role = row.seccomp_policy;
  switch (row.writes) {
    case Writes::kNothing:
    case Writes::kNoLandlock:
      if (!needs.writable_paths.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the ", row.name, " writes nothing, so it cannot be given ",
            needs.writable_paths.front(), " as a writable path"));
      }
      break;
    case Writes::kGiven:
      if (needs.writable_paths.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("the ", row.name,
                         " needs the folder it writes as a writable path"));
      }
      break;
    case Writes::kUpTo:
      break;
  }
  for (const std::string& path : needs.writable_paths) {
    if (path.empty() || path[0] != '/') {
      return absl::InvalidArgumentError(
          absl::StrCat("the ", row.name, "'s writable path \"", path,
                       "\" must be absolute"));
    }
  }
  options.writable_paths = needs.writable_paths;
  for (const std::string& path : row.also_writable) {
    if (::access(path.c_str(), F_OK) == 0)
      options.writable_paths.push_back(path);
  }
  if (row.writes == Writes::kNoLandlock) {
    options.without_landlock = WithoutLandlock{row.no_landlock_why};
  }
  switch (row.network) {
    case Network::kNone:
      if (!needs.tcp_connect_ports.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the ", row.name, " has no network, so it cannot be given ports"));
      }
      break;
    case Network::kAny:
      options.allow_network = true;
      break;
    case Network::kByPorts: {
      std::vector<int> ports = needs.tcp_connect_ports;
      ports.insert(ports.end(), row.also_ports.begin(), row.also_ports.end());
      options.allow_network = !ports.empty();
      if (!ports.empty()) options.tcp_connect_ports = ports;
      break;
    }
  }
  return options;
}

std::string Summary(const RoleRow& row, const LockdownReport& report) {
  std::string network;
  if (row.network == Network::kByPorts) {
    if (report.tcp_ports.empty()) {
      network = "; no network";
    } else if (report.tcp_ports_enforced) {
      network = absl::StrCat("; TCP only to port ",
                             absl::StrJoin(report.tcp_ports, ", "));
    } else {
      network = absl::StrCat("; TCP not limited to port ",
                             absl::StrJoin(report.tcp_ports, ", "),
                             " (Landlock ABI ", report.landlock_abi, " < 4)");
    }
  }
  return absl::StrCat(row.name, " locked down (", DescribeEnforced(report),
                      network,
                      report.weaker.empty() ? "" : "; weaker: ", report.weaker,
                      "): ", row.after);
}

}  // namespace

std::string RoleName(Role role) { return RowOf(role).name; }

std::string DescribeEnforced(const LockdownReport& report) {
  return absl::StrCat(report.landlock_enforced
                          ? absl::StrCat("Landlock ABI ", report.landlock_abi)
                          : std::string("no Landlock"),
                      report.seccomp_enforced ? ", seccomp" : ", no seccomp");
}

namespace {

// LockDown with the person's --accept-weaker-lockdown, in the one wording
// of every role: the refusal, the weaker line on `say`, the ports kept.
absl::StatusOr<LockdownReport> TakeLockDown(
    const std::string& name, absl::StatusOr<LockdownOptions> options,
    const std::string& why, const std::function<void(const std::string&)>& say,
    const lockdown_internal::LandlockAbiProbe& probe) {
  if (options.ok() && !why.empty()) {
    options->accept_weaker = AcceptWeakerLockdown{why};
  }
  absl::StatusOr<LockdownReport> done =
      options.ok() ? lockdown_internal::LockDownWithProbe(
                         *options, probe ? probe
                                         : lockdown_internal::LandlockAbiProbe(
                                               LandlockAbiVersion))
                   : options.status();
  if (!done.ok()) {
    return absl::Status(
        done.status().code(),
        absl::StrCat("cannot lock down the ", name, ": ",
                     done.status().message(),
                     "; nothing is served (--accept-weaker-lockdown WHY "
                     "serves with less, and says so)"));
  }
  // A role without Landlock by design (the stager) always has a `weaker`;
  // it is news to the person only when they accepted less.
  if (done->weaker_accepted && say) {
    say(absl::StrCat("weaker lockdown (--accept-weaker-lockdown): ",
                     done->weaker));
  }
  if (options->tcp_connect_ports) done->tcp_ports = *options->tcp_connect_ports;
  return done;
}

}  // namespace

namespace lockdown_internal {

absl::StatusOr<LockdownReport> LockDownAsWithProbe(
    Role role, const RoleNeeds& needs, const WeakerLockdown& weaker,
    const LandlockAbiProbe& probe) {
  const RoleRow& row = RowOf(role);
  ASSIGN_OR_RETURN(LockdownReport done,
                   TakeLockDown(row.name, OptionsFor(row, needs), weaker.why,
                                weaker.say, probe));
  done.summary = Summary(row, done);
  return done;
}

}  // namespace lockdown_internal

absl::StatusOr<LockdownReport> LockDownAs(Role role, const RoleNeeds& needs,
                                          const WeakerLockdown& weaker) {
  return lockdown_internal::LockDownAsWithProbe(role, needs, weaker,
                                                LandlockAbiVersion);
}

}  // namespace garuda
