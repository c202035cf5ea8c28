// What the stager's serve mode puts into a command's reply: the result of a
// run, a staged change list as a sealed memfd, and a host command's output
// captured in memfds (lib/staging/service.cc, for commands and MCP servers).
#ifndef GARUDA_LIB_STAGING_COMMAND_REPLY_H_
#define GARUDA_LIB_STAGING_COMMAND_REPLY_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/base/unique_fd.h"
#include "lib/changeset/changeset.h"
#include "proto/stager_service.pb.h"
#include "sandbox/sandbox.h"

namespace garuda {

// The run's outcome and captured output into `result`.
void FillResult(const RunResult& run, bool on_host,
                stager::CommandResult* result);

// A staged change list into a reply: its counts, and the sealed memfd when
// it changes something. For a staged command and an MCP server alike.
absl::Status PutChangeSet(const ChangeSet& change_set, int conflicts,
                          stager::CommandResult* result,
                          std::vector<UniqueFd>* reply_fds);

// RunOnHost with the command's stdout and stderr in two memfds instead of
// pipes: a process the command leaves running on the host (a server started
// with &) keeps its output descriptors, and a pipe would hold the reply
// until it ends. Inside the sandbox this cannot happen: every process ends
// with the command.
absl::StatusOr<RunResult> RunOnHostIntoFiles(RunOptions run,
                                             const std::string& directory);

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_COMMAND_REPLY_H_
