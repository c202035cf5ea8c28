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
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lib/consent/consent.h"
#include "lib/lockdown/roles.h"

namespace garuda {

struct ApplierServeOptions {
  int channel_fd = -1;
  std::string project;    // empty: the current folder
  std::string undo_root;  // empty: ~/.garuda/undo
  // Who decides each change (rules only, unless the agent started the
  // applier for a person at the terminal).
  ConsentOptions consent;
  // main.cc's LockDownAs(Role::kApplier), called once the channel, the
  // project and the undo store are open, with the paths the process may
  // still write; empty: the applier refuses to serve.
  LockDownCall lock_down;
  std::function<void(const std::string& line)> log;
  // --job FILE: a job's applier. It reads the job file itself, adds the
  // job's rules to the settings' and refuses every change list with a path
  // outside the job's writeScope (lib/apply/scope_refusal.h).
  std::string job_file;
};

// Serves until the agent closes the channel (OK) or the protocol is broken
// (the error; nothing of a bad request was written).
absl::Status RunApplierServe(const ApplierServeOptions& options);

}  // namespace garuda

#endif  // GARUDA_LIB_APPLY_SERVICE_H_
