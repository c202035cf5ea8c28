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

absl::StatusOr<OpenedAuditor> OpenAuditor(const AuditorOptions& options) {
  // A closed stdout or witness pipe is an error to report, not a crash.
  ::signal(SIGPIPE, SIG_IGN);
  if (options.mode != "append" && options.mode != "serve") {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown mode \"", options.mode, "\": use append or serve (see --help)"));
  }
  if (options.project.empty()) {
    return absl::InvalidArgumentError("--project DIR is required");
  }
  if (options.mode == "serve" && options.channel_fd < 0) {
    return absl::InvalidArgumentError("serve needs --channel-fd=N");
  }
  // What the role needs, while the process still may: settings, the
  // folders, a new log, the signing key, the witness command (a child that
  // keeps the rights the auditor is about to give up, e.g. the network for
  // ssh).
  OpenedAuditor opened;
  opened.append = options.mode == "append";
  absl::StatusOr<SettingsSources> sources =
      LoadSettingsSources(DefaultSettingsLocations(options.project));
  if (!sources.ok()) return sources.status();
  AuditConfig config = AuditConfigFromSources(*sources);
  for (const std::string& note : config.ignored) Say(note);
  absl::StatusOr<std::string> root = AuditRoot();
  if (!root.ok()) return root.status();
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
      if (!signer.ok()) return signer.status();
      writer_options.signer = *std::move(signer);
    }
  }
  writer_options.audit_root = *root;
  writer_options.project = options.project;
  writer_options.log_name = options.log;
  writer_options.config = config;
  absl::StatusOr<std::unique_ptr<AuditWriter>> writer =
      AuditWriter::Open(writer_options);
  if (!writer.ok()) return writer.status();
  opened.writer = *std::move(writer);
  if (opened.append) {
    absl::StatusOr<UniqueFd> fd = InterruptsAsDescriptor();
    if (!fd.ok()) return fd.status();
    opened.interrupts = std::move(fd).value();
  } else {
    ipc::ChannelOptions channel_options;
    channel_options.peer_name = "garuda-auditor client";
    absl::StatusOr<ipc::Channel> from_fd =
        ipc::ChannelFromFd(options.channel_fd, channel_options);
    if (!from_fd.ok()) return from_fd.status();
    opened.channel = std::make_unique<ipc::Channel>(std::move(from_fd).value());
  }
  return opened;
}

RoleNeeds AuditorNeeds(const OpenedAuditor& opened) {
  // Writes only beneath this project's audit folder.
  RoleNeeds needs;
  needs.writable_paths = {opened.writer->folder()};
  return needs;
}

int ServeAuditor(OpenedAuditor& opened) {
  // The timed-sync thread starts only now: the lockdown (Landlock binds
  // only the calling thread) was taken while single-threaded.
  opened.writer->StartTimedSync();
  int status = 0;
  std::vector<std::string> warnings;
  if (opened.append) {
    absl::StatusOr<AppendStreamResult> result = AppendEventsFromStream(
        STDIN_FILENO, *opened.writer,
        [](const std::string& refused) {
          Say(absl::StrCat("refused standard input ", refused,
                           "; nothing written for it"));
        },
        opened.interrupts.get());
    absl::StatusOr<AppendResult> closed = opened.writer->Close();
    if (!result.ok()) return Fail(result.status());
    if (!closed.ok()) return Fail(closed.status());
    warnings = result->warnings;
    warnings.insert(warnings.end(), closed->warnings.begin(),
                    closed->warnings.end());
    std::printf("%s: %s, last seq %llu\n", opened.writer->log_path().c_str(),
                RefusalSummary(*result).c_str(),
                static_cast<unsigned long long>(closed->last_seq));
    if (result->refused > 0) status = 1;
    if (result->interrupted) {
      Say("interrupted: the lines read so far are written and the log is "
          "closed");
      status = 130;
    }
  } else {
    absl::Status served =
        ServeAuditChannel(*opened.channel, *opened.writer, &warnings);
    if (!served.ok()) status = Fail(served);
  }
  for (const std::string& warning : warnings)
    Say(absl::StrCat("warning: ", warning));
  if (!warnings.empty()) status = 1;
  return status;
}

}  // namespace garuda
