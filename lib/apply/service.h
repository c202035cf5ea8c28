// `garuda-applier serve`: the applier's session channel with garuda-agent
// (proto/applier_service.proto). Started once per session on a socketpair;
// it locks itself down as `apply` does (writes only to the project and the
// undo store, no network), then serves:
//
//   ApplyChangeSet: the list comes as a ChangeSet frame stream in the
//     sealed memfd passed with the request (anything unsealed is refused);
//     the applier decides itself (lib/consent: it asks the person on the
//     terminal, or re-checks the rules it read at start) and only then
//     runs the conflict check, all or nothing, with an undo record tagged
//     with the session; the outcome line as `apply` prints it, and who
//     decided. The agent's word that the person agreed is never taken,
//     except as an explicit relayed answer with --consent=relayed.
//   UndoApply: restores the project as it was before an apply (undo_id, or
//     the session's newest apply that is not undone yet).
#ifndef GARUDA_LIB_APPLY_SERVICE_H_
#define GARUDA_LIB_APPLY_SERVICE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lib/consent/consent.h"
#include "lib/apply/outcome.h"
#include "lib/base/unique_fd.h"
#include "lib/ipc/channel.h"

namespace garuda {

struct ApplierServeOptions {
  int channel_fd = -1;
  std::string project;    // empty: the current folder
  std::string undo_root;  // empty: ~/.garuda/undo
  // Who decides each change (rules only, unless the agent started the
  // applier for a person at the terminal).
  ConsentOptions consent;
  std::function<void(const std::string& line)> log;
  // --job FILE: a job's applier. It reads the job file itself, adds the
  // job's rules to the settings' and refuses every change list with a path
  // outside the job's writeScope (lib/apply/scope_refusal.h).
  std::string job_file;
};

// What `garuda-applier serve` opens before its lockdown: the channel, the
// project and the undo store (made when missing), a job's file, the
// consent (the rules read, the terminal opened).
struct OpenedApplier {
  ipc::Channel channel;
  ApplierPlaces places;
  UniqueFd project_fd;
  std::unique_ptr<Consent> consent;
  // What the process may still write after its lockdown.
  std::vector<std::string> writable_paths() const;
};
absl::StatusOr<OpenedApplier> OpenApplierServe(
    const ApplierServeOptions& options);

// After main.cc's lockdown (Role::kApplier with writable_paths()): serves
// until the agent closes the channel (OK) or breaks the protocol.
absl::Status ServeApplier(OpenedApplier& opened,
                          const ApplierServeOptions& options);

}  // namespace garuda

#endif  // GARUDA_LIB_APPLY_SERVICE_H_
