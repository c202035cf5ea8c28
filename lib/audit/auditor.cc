#include "lib/audit/auditor.h"

#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "lib/audit/append_stream.h"
#include "lib/audit/audit_config.h"
#include "lib/audit/paths.h"
#include "lib/audit/server.h"
#include "lib/audit/signing_key.h"
#include "lib/audit/writer.h"
#include "lib/base/errno_status.h"
#include "lib/base/unique_fd.h"
#include "lib/ipc/helper_process.h"
#include "lib/lockdown/roles.h"
#include "lib/policy/sources.h"

namespace garuda {
namespace {

// SIGINT and SIGTERM end append's input; the log is then closed as at the
// end of input. They stay blocked in every thread (so the timed-sync thread
// never takes one) and arrive on a signalfd that append looks at before
// every read: unlike a mask that ppoll lets go only while it waits, that
// holds while input keeps coming.
absl::StatusOr<UniqueFd> InterruptsAsDescriptor() {
  sigset_t both;
  sigemptyset(&both);
  sigaddset(&both, SIGINT);
  sigaddset(&both, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &both, nullptr);
  int fd = ::signalfd(-1, &both, SFD_CLOEXEC | SFD_NONBLOCK);
  if (fd < 0) return LastErrnoStatus("signalfd(SIGINT, SIGTERM)");
  return UniqueFd(fd);
}

void Say(const std::string& text) {
  std::fprintf(stderr, "garuda-auditor: %s\n", text.c_str());
}

int Fail(const absl::Status& status) {
  Say(std::string(status.message()));
  return 1;
}

}  // namespace

int RunAuditor(const AuditorOptions& options) {
  // A closed stdout or witness pipe is an error to report, not a crash.
  ::signal(SIGPIPE, SIG_IGN);
  if (options.mode != "append" && options.mode != "serve") {
    Say(absl::StrCat("unknown mode \"", options.mode,
                     "\": use append or serve (see --help)"));
    return 2;
  }
  if (options.project.empty()) {
    Say("--project DIR is required");
    return 2;
  }
  if (options.mode == "serve" && options.channel_fd < 0) {
    Say("serve needs --channel-fd=N");
    return 2;
  }

  // 1. What the role needs, while the process still may: settings, the
  //    folders, a new log, the witness command (a child that keeps the
  //    rights the auditor is about to give up, e.g. the network for ssh).
  absl::StatusOr<SettingsSources> sources =
      LoadSettingsSources(DefaultSettingsLocations(options.project));
  if (!sources.ok()) return Fail(sources.status());
  AuditConfig config = AuditConfigFromSources(*sources);
  for (const std::string& note : config.ignored) Say(note);
  absl::StatusOr<std::string> root = AuditRoot();
  if (!root.ok()) return Fail(root.status());
  WriterOptions writer_options;
  if (!config.signing_key.empty()) {
    if (!config.checkpoint) {
      Say(absl::StrCat("\"audit.signingKey\" in ", config.signing_key_source,
                       " is not used: it needs \"audit.checkpoint\": true"));
    } else {
      // Read now, before the lockdown and before any event; held in memory
      // only.
      absl::StatusOr<std::shared_ptr<const NoteSigner>> signer =
          ReadSigningKey(config.signing_key);
      if (!signer.ok()) return Fail(signer.status());
      writer_options.signer = *std::move(signer);
    }
  }
  writer_options.audit_root = *root;
  writer_options.project = options.project;
  writer_options.log_name = options.log;
  writer_options.config = config;
  absl::StatusOr<std::unique_ptr<AuditWriter>> writer =
      AuditWriter::Open(writer_options);
  if (!writer.ok()) return Fail(writer.status());
  UniqueFd interrupts;
  if (options.mode == "append") {
    absl::StatusOr<UniqueFd> fd = InterruptsAsDescriptor();
    if (!fd.ok()) return Fail(fd.status());
    interrupts = std::move(fd).value();
  }
  std::unique_ptr<ipc::Channel> channel;
  if (options.mode == "serve") {
    ipc::ChannelOptions channel_options;
    channel_options.peer_name = "garuda-auditor client";
    absl::StatusOr<ipc::Channel> from_fd =
        ipc::ChannelFromFd(options.channel_fd, channel_options);
    if (!from_fd.ok()) return Fail(from_fd.status());
    channel = std::make_unique<ipc::Channel>(std::move(from_fd).value());
  }

  // 2. Lock down: writes only beneath this project's audit folder, no
  //    network sockets, no exec. Done while single-threaded (Landlock binds
  //    only the calling thread), so the timed-sync thread starts after.
  RoleNeeds needs;
  needs.writable_paths = {(*writer)->folder()};
  absl::StatusOr<LockdownReport> locked =
      RequireLockDown(options.lock_down, needs, "garuda-auditor");
  if (!locked.ok()) return Fail(locked.status());
  (*writer)->StartTimedSync();

  // 3. Serve.
  int status = 0;
  std::vector<std::string> warnings;
  if (options.mode == "append") {
    absl::StatusOr<AppendStreamResult> result = AppendEventsFromStream(
        STDIN_FILENO, **writer,
        [](const std::string& refused) {
          Say(absl::StrCat("refused standard input ", refused,
                           "; nothing written for it"));
        },
        interrupts.get());
    absl::StatusOr<AppendResult> closed = (*writer)->Close();
    if (!result.ok()) return Fail(result.status());
    if (!closed.ok()) return Fail(closed.status());
    warnings = result->warnings;
    warnings.insert(warnings.end(), closed->warnings.begin(),
                    closed->warnings.end());
    std::printf("%s: %s, last seq %llu\n", (*writer)->log_path().c_str(),
                RefusalSummary(*result).c_str(),
                static_cast<unsigned long long>(closed->last_seq));
    if (result->refused > 0) status = 1;
    if (result->interrupted) {
      Say("interrupted: the lines read so far are written and the log is "
          "closed");
      status = 130;
    }
  } else {
    absl::Status served = ServeAuditChannel(*channel, **writer, &warnings);
    if (!served.ok()) status = Fail(served);
  }
  for (const std::string& warning : warnings)
    Say(absl::StrCat("warning: ", warning));
  if (!warnings.empty()) status = 1;
  return status;
}

}  // namespace garuda
