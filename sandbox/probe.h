// What this machine allows, with the reason and the fix for each missing
// part. Presence is not enough: canaries run a real sandbox and check that
// a write outside the writable paths is refused and that a connect with the
// network off fails; a feature whose canary fails is reported missing.
#ifndef GARUDA_SANDBOX_PROBE_H_
#define GARUDA_SANDBOX_PROBE_H_

#include <string>
#include <vector>

namespace garuda {

struct ProbeFeature {
  std::string name;  // "user namespaces", "landlock", ...
  bool available = false;
  std::string detail;    // "ABI 7"
  std::string reason;    // why it is missing
  std::string fix;       // what a person can do
  bool required = true;  // needed by direct mode (overlay is not)
};

struct ProbeReport {
  std::vector<ProbeFeature> features;
  int landlock_abi = 0;

  // Every required feature is available (and its canary passed).
  bool SandboxWorks() const;
  // An overlay could be mounted in a user namespace (what backend "auto"
  // takes overlay on); false when the probe did not check.
  bool OverlayWorks() const;
  // The first required feature that is missing, or nullptr.
  const ProbeFeature* FirstMissing() const;
  // One line per feature, for a terminal.
  std::string ToText() const;
  // One JSON object: {"sandbox":true,"landlockAbi":7,"features":[...]}.
  std::string ToJson() const;
};

// What a probe checks beyond the quick part, which is always made: one
// child in new user and mount namespaces that maps its ids, mounts a tmpfs
// and loads a seccomp filter, and the Landlock ABI. The default is the full
// probe (`garuda-stager probe`, a serve session's start).
struct ProbeOptions {
  // An overlay mounted in the quick part's namespace child (no process
  // more): "overlayfs in a user namespace", which backend "auto" reads.
  bool overlay = true;
  // The canaries: a real sandbox in which a write outside the writable
  // paths and a connect to the host's loopback must fail.
  bool canaries = true;
  // A cgroup made per limit, with a process born or moved into it.
  bool cgroups = true;

  // The quick part alone: what a direct run asks for the reason its
  // sandbox failed, and a new staging view before anything is made.
  static ProbeOptions Quick() { return {false, false, false}; }
};

// The name of the test seam: when this environment variable is "1", the
// probe reports that user namespaces are missing. It can only make Garuda
// stricter (a missing sandbox refuses or asks), never weaker, so honouring
// it in the real program is harmless; tests use it as the fake probe.
inline constexpr char kPretendNoSandboxVariable[] =
    "GARUDA_TEST_ONLY_PRETEND_NO_SANDBOX";

ProbeReport ProbeSandbox(const ProbeOptions& options);

// What the probe reads to explain missing user namespaces (a separate type
// so that each explanation can be tested).
struct NamespaceSettings {
  std::string max_user_namespaces;        // /proc/sys/user/...
  std::string apparmor_restrict_userns;   // /proc/sys/kernel/apparmor_...
  std::string unprivileged_userns_clone;  // /proc/sys/kernel/... (Debian)
  bool root = false;
  bool in_container = false;  // /.dockerenv, /run/.containerenv
  std::string kernel_release;
};
NamespaceSettings ReadNamespaceSettings();

// Fills the reason and the fix of a missing user-namespace feature.
void ExplainUserNamespaces(const NamespaceSettings& settings,
                           ProbeFeature* feature);

// Whether the test seam above is set.
bool PretendingNoSandbox();

}  // namespace garuda

#endif  // GARUDA_SANDBOX_PROBE_H_
