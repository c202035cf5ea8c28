#include "lib/lockdown/seccomp_filter.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/json_message.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/lockdown/embedded_policies.h"

namespace garuda {
namespace {

// Policies may include others this deep, which is more than ours need.
constexpr int kMaxIncludeDepth = 4;

struct NamedValue {
  const char* name;
  uint64_t value;
};

// The constants a policy may name instead of writing a number.
constexpr NamedValue kConstants[] = {
    {"AF_UNIX", AF_UNIX},           {"AF_INET", AF_INET},
    {"AF_INET6", AF_INET6},         {"AF_NETLINK", AF_NETLINK},
    {"AF_PACKET", AF_PACKET},       {"TIOCSTI", TIOCSTI},
    {"TIOCLINUX", TIOCLINUX},       {"CLONE_NEWUSER", CLONE_NEWUSER},
    {"CLONE_NEWNS", CLONE_NEWNS},   {"CLONE_NEWPID", CLONE_NEWPID},
    {"CLONE_NEWNET", CLONE_NEWNET}, {"CLONE_NEWUTS", CLONE_NEWUTS},
    {"CLONE_NEWIPC", CLONE_NEWIPC}, {"CLONE_NEWCGROUP", CLONE_NEWCGROUP},
    {"PER_LINUX", PER_LINUX},       {"PER_LINUX32", PER_LINUX32},
    {"CLONE_THREAD", CLONE_THREAD},
};

// The errno values a rule may return.
constexpr NamedValue kErrnos[] = {
    {"EPERM", EPERM},
    {"ENOSYS", ENOSYS},
    {"EACCES", EACCES},
    {"EINVAL", EINVAL},
    {"EAFNOSUPPORT", EAFNOSUPPORT},
    {"ENOTTY", ENOTTY},
    {"EOPNOTSUPP", EOPNOTSUPP},
};

absl::StatusOr<uint64_t> ParseValue(const std::string& text,
                                    absl::string_view what) {
  for (const NamedValue& constant : kConstants) {
    if (text == constant.name) return constant.value;
  }
  if (!text.empty() && text[0] >= '0' && text[0] <= '9') {
    errno = 0;
    char* end = nullptr;
    unsigned long long value = strtoull(text.c_str(), &end, 0);
    if (errno == 0 && end != nullptr && *end == '\0') return value;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      what, ": \"", text, "\" is neither a number nor a known constant name"));
}

absl::StatusOr<uint32_t> ParseAction(const std::string& text,
                                     absl::string_view what) {
  if (text == "allow") return SCMP_ACT_ALLOW;
  if (text == "kill") return SCMP_ACT_KILL_PROCESS;
  if (text == "log") return SCMP_ACT_LOG;
  for (const NamedValue& error : kErrnos) {
    if (text == error.name) {
      return SCMP_ACT_ERRNO(static_cast<uint16_t>(error.value));
    }
  }
  std::vector<std::string> errnos;
  for (const NamedValue& error : kErrnos) errnos.push_back(error.name);
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": unknown action \"", text, "\" (allow, kill, log, ",
                   absl::StrJoin(errnos, ", "), ")"));
}

absl::StatusOr<scmp_compare> ParseOp(SeccompArgCondition::Op op,
                                     absl::string_view what) {
  switch (op) {
    case SeccompArgCondition::EQ:
      return SCMP_CMP_EQ;
    case SeccompArgCondition::NE:
      return SCMP_CMP_NE;
    case SeccompArgCondition::LT:
      return SCMP_CMP_LT;
    case SeccompArgCondition::LE:
      return SCMP_CMP_LE;
    case SeccompArgCondition::GT:
      return SCMP_CMP_GT;
    case SeccompArgCondition::GE:
      return SCMP_CMP_GE;
    case SeccompArgCondition::MASKED_EQ:
      return SCMP_CMP_MASKED_EQ;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": op missing (EQ, NE, LT, LE, GT, GE, MASKED_EQ)"));
  }
}

absl::StatusOr<scmp_arg_cmp> ParseCondition(
    const SeccompArgCondition& condition, absl::string_view what) {
  if (condition.arg() > 5) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": arg ", condition.arg(), " is not 0 to 5"));
  }
  ASSIGN_OR_RETURN(scmp_compare op, ParseOp(condition.op(), what));
  ASSIGN_OR_RETURN(uint64_t value, ParseValue(condition.value(), what));
  scmp_arg_cmp compare = {};
  compare.arg = condition.arg();
  compare.op = op;
  if (op == SCMP_CMP_MASKED_EQ) {
    ASSIGN_OR_RETURN(uint64_t mask, ParseValue(condition.mask(), what));
    compare.datum_a = mask;
    compare.datum_b = value;
  } else {
    if (!condition.mask().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": mask is only for MASKED_EQ"));
    }
    compare.datum_a = value;
  }
  return compare;
}

bool IsPolicyName(absl::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-')) {
      return false;
    }
  }
  return true;
}

using PolicyReader =
    std::function<absl::StatusOr<SeccompPolicy>(const std::string& name)>;

// Appends the includes of `part` (each once), then its own architectures
// and rules, to `merged`.
absl::Status MergeInto(const SeccompPolicy& part, const std::string& source,
                       const PolicyReader& read, int depth,
                       std::set<std::string>* seen, SeccompPolicy* merged) {
  for (const std::string& name : part.include()) {
    if (!IsPolicyName(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": include \"", name,
                       "\" is not a policy name (a-z, 0-9, _ and -)"));
    }
    if (!seen->insert(name).second) continue;
    if (depth >= kMaxIncludeDepth) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, ": includes nest deeper than ", kMaxIncludeDepth));
    }
    ASSIGN_OR_RETURN(SeccompPolicy included, read(name));
    if (!included.default_action().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("seccomp policy \"", name, "\" (included by ", source,
                       ") sets defaultAction; only the top policy may"));
    }
    RETURN_IF_ERROR(MergeInto(included, name, read, depth + 1, seen, merged));
  }
  for (const std::string& arch : part.architectures()) {
    if (std::find(merged->architectures().begin(),
                  merged->architectures().end(),
                  arch) == merged->architectures().end()) {
      merged->add_architectures(arch);
    }
  }
  for (const SeccompRule& rule : part.rules()) *merged->add_rules() = rule;
  return absl::OkStatus();
}

absl::StatusOr<SeccompPolicy> MergeIncludes(const SeccompPolicy& top,
                                            const std::string& source,
                                            const PolicyReader& read) {
  SeccompPolicy merged;
  merged.set_description(top.description());
  merged.set_default_action(top.default_action());
  std::set<std::string> seen = {source};
  RETURN_IF_ERROR(MergeInto(top, source, read, 0, &seen, &merged));
  return merged;
}

absl::StatusOr<SeccompPolicy> ReadEmbedded(const std::string& name) {
  for (size_t i = 0; i < kEmbeddedSeccompPolicyCount; ++i) {
    const EmbeddedPolicy& policy = kEmbeddedSeccompPolicies[i];
    if (name != policy.name) continue;
    SeccompPolicy message;
    if (!message.ParseFromArray(policy.binary,
                                static_cast<int>(policy.binary_size))) {
      return absl::InternalError(absl::StrCat(
          "the compiled-in policies/seccomp/", name, ".json does not decode"));
    }
    return message;
  }
  return absl::NotFoundError(
      absl::StrCat("no seccomp policy \"", name, "\" is compiled in (known: ",
                   absl::StrJoin(SeccompRoleNames(), ", "), ")"));
}

}  // namespace

absl::StatusOr<SeccompPolicy> LoadSeccompPolicy(const std::string& path) {
  SeccompPolicy top;
  // Policy files are installed data (in tests, Bazel's runfile links).
  RETURN_IF_ERROR(ReadJsonMessageFile(path, &top, JsonFileOptions(true)));
  const std::string folder = Dirname(path);
  return MergeIncludes(top, path, [&folder](const std::string& name) {
    SeccompPolicy included;
    absl::Status status =
        ReadJsonMessageFile(JoinPath(folder, name + ".json"), &included,
                            JsonFileOptions(true));
    if (!status.ok()) return absl::StatusOr<SeccompPolicy>(status);
    return absl::StatusOr<SeccompPolicy>(std::move(included));
  });
}

absl::StatusOr<SeccompPolicy> SeccompPolicyForRole(absl::string_view role,
                                                   bool allow_network) {
  const std::string name(role);
  ASSIGN_OR_RETURN(SeccompPolicy top, ReadEmbedded(name));
  if (top.default_action().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "seccomp policy \"", name, "\" is a part for inclusion, not a role"));
  }
  ASSIGN_OR_RETURN(SeccompPolicy merged,
                   MergeIncludes(top, name, ReadEmbedded));
  if (allow_network) return WithNetwork(std::move(merged));
  return merged;
}

absl::StatusOr<std::string> SeccompBpfForRole(absl::string_view role,
                                              bool allow_network) {
  static std::mutex mutex;
  static auto* const compiled =
      new std::map<std::pair<std::string, bool>, std::string>();
  const std::pair<std::string, bool> key(role, allow_network);
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = compiled->find(key);
    if (found != compiled->end()) return found->second;
  }
  // Compiled without the lock held, so that a process forked meanwhile by
  // another thread (an MCP server's supervisor) never inherits it taken for
  // long; two threads may both compile a role the first time, alike.
  ASSIGN_OR_RETURN(SeccompPolicy policy,
                   SeccompPolicyForRole(role, allow_network));
  ASSIGN_OR_RETURN(SeccompFilter filter, SeccompFilter::Build(policy));
  ASSIGN_OR_RETURN(std::string bpf, filter.ExportBpf());
  std::lock_guard<std::mutex> lock(mutex);
  compiled->emplace(key, bpf);
  return bpf;
}

std::vector<std::string> SeccompRoleNames() {
  std::vector<std::string> names;
  for (size_t i = 0; i < kEmbeddedSeccompPolicyCount; ++i) {
    // Parts for inclusion have no default action; they are not roles.
    SeccompPolicy policy;
    if (policy.ParseFromArray(
            kEmbeddedSeccompPolicies[i].binary,
            static_cast<int>(kEmbeddedSeccompPolicies[i].binary_size)) &&
        !policy.default_action().empty()) {
      names.push_back(kEmbeddedSeccompPolicies[i].name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

SeccompPolicy WithNetwork(SeccompPolicy policy) {
  auto* rules = policy.mutable_rules();
  rules->erase(std::remove_if(rules->begin(), rules->end(),
                              [](const SeccompRule& rule) {
                                return rule.network_off_only();
                              }),
               rules->end());
  return policy;
}

void SeccompFilter::ContextDeleter::operator()(void* context) const {
  seccomp_release(context);
}

absl::StatusOr<SeccompFilter> SeccompFilter::Build(
    const SeccompPolicy& policy) {
  if (!policy.include().empty()) {
    return absl::InvalidArgumentError(
        "seccomp policy still has includes: read it with LoadSeccompPolicy or "
        "SeccompPolicyForRole");
  }
  if (policy.default_action().empty()) {
    return absl::InvalidArgumentError("seccomp policy has no defaultAction");
  }
  ASSIGN_OR_RETURN(uint32_t default_action,
                   ParseAction(policy.default_action(), "defaultAction"));
  void* context = seccomp_init(default_action);
  if (context == nullptr) {
    return absl::InternalError("seccomp_init failed (out of memory?)");
  }
  SeccompFilter filter(context);

  // TSYNC: the filter covers every thread of the process, not only the one
  // that loads it, so no thread is left unfiltered.
  int rc = seccomp_attr_set(context, SCMP_FLTATR_CTL_TSYNC, 1);
  if (rc != 0) return ErrnoStatus(-rc, "seccomp_attr_set(CTL_TSYNC)");

  for (const std::string& name : policy.architectures()) {
    uint32_t arch = seccomp_arch_resolve_name(name.c_str());
    if (arch == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("architectures: unknown architecture \"", name,
                       "\" (libseccomp names: x86, x86_64, x32, ...)"));
    }
    rc = seccomp_arch_add(context, arch);
    if (rc != 0 && rc != -EEXIST) {
      return ErrnoStatus(-rc, absl::StrCat("seccomp_arch_add(", name, ")"));
    }
  }

  for (int i = 0; i < policy.rules_size(); ++i) {
    const SeccompRule& rule = policy.rules(i);
    const std::string what = absl::StrCat(
        "rule ", i + 1, " (", absl::StrJoin(rule.syscalls(), ", "), ")");
    if (rule.syscalls().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": no syscalls"));
    }
    ASSIGN_OR_RETURN(uint32_t action, ParseAction(rule.action(), what));
    std::vector<scmp_arg_cmp> conditions;
    for (const SeccompArgCondition& condition : rule.conditions()) {
      ASSIGN_OR_RETURN(scmp_arg_cmp compare, ParseCondition(condition, what));
      conditions.push_back(compare);
    }
    for (const std::string& name : rule.syscalls()) {
      int number = seccomp_syscall_resolve_name(name.c_str());
      if (number == __NR_SCMP_ERROR) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": unknown system call \"", name, "\""));
      }
      rc = seccomp_rule_add_array(context, action, number, conditions.size(),
                                  conditions.data());
      if (rc != 0) {
        return ErrnoStatus(
            -rc, absl::StrCat(what, ": seccomp_rule_add(", name, ")"));
      }
    }
  }
  return filter;
}

absl::StatusOr<std::string> SeccompFilter::ExportPfc() const {
  // seccomp_export_pfc writes to a descriptor; a memfd keeps it in memory.
  UniqueFd memory(memfd_create("seccomp_pfc", MFD_CLOEXEC));
  if (!memory) return LastErrnoStatus("memfd_create(seccomp_pfc)");
  int rc = seccomp_export_pfc(context_.get(), memory.get());
  if (rc != 0) return ErrnoStatus(-rc, "seccomp_export_pfc");
  if (lseek(memory.get(), 0, SEEK_SET) != 0) {
    return LastErrnoStatus("lseek(seccomp_pfc)");
  }
  return ReadAll(memory.get());
}

absl::StatusOr<std::string> SeccompFilter::ExportBpf() const {
  UniqueFd memory(memfd_create("seccomp_bpf", MFD_CLOEXEC));
  if (!memory) return LastErrnoStatus("memfd_create(seccomp_bpf)");
  int rc = seccomp_export_bpf(context_.get(), memory.get());
  if (rc != 0) return ErrnoStatus(-rc, "seccomp_export_bpf");
  if (lseek(memory.get(), 0, SEEK_SET) != 0) {
    return LastErrnoStatus("lseek(seccomp_bpf)");
  }
  return ReadAll(memory.get());
}

absl::Status SeccompFilter::Load() {
  // Safe: no_new_privs only takes away the gain of privileges on exec
  // (setuid bits, file capabilities); the kernel requires it before an
  // unprivileged process may install a filter, and it cannot be undone.
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return LastErrnoStatus("prctl(PR_SET_NO_NEW_PRIVS)");
  }
  // Safe: a filter only ever narrows what this process and its children
  // may do; it cannot grant anything.
  int rc = seccomp_load(context_.get());
  if (rc != 0) return ErrnoStatus(-rc, "seccomp_load");
  return absl::OkStatus();
}

}  // namespace garuda
