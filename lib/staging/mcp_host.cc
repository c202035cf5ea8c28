#include "lib/staging/mcp_host.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/changeset/beneath.h"
#include "lib/jobs/scope.h"
#include "lib/netproxy/session_proxy.h"
#include "lib/policy/mcp_servers.h"
#include "lib/rules/domain_rules.h"
#include "lib/staging/change_clock.h"
#include "lib/staging/network_start.h"
#include "lib/staging/session.h"
#include "sandbox/command_policy.h"
#include "sandbox/network_proxy.h"
#include "sandbox/sandbox.h"

namespace garuda {
namespace {

// What a server's environment takes from the stager's, besides its own env.
constexpr const char* kPassed[] = {"PATH", "HOME", "LANG", "TERM"};
constexpr char kDefaultPath[] = "/usr/local/bin:/usr/bin:/bin";

bool Inside(const std::string& path, const std::string& folder) {
  return path == folder || folder == "/" ||
         absl::StartsWith(path, absl::StrCat(folder, "/"));
}

// The supervisor and the pump: in a child of the stager, whose other
// descriptors (the agent's channel above all) must not stay open in it.
void KeepOnly(int highest) {
  ::close_range(static_cast<unsigned int>(highest) + 1, ~0U, 0);
}

// The pump: stdin is the server's stderr, stdout the log file. Keeps the
// first `cap` bytes, then one line, then reads on (so that the server never
// blocks on a full pipe) and drops.
[[noreturn]] void Pump(uint64_t cap) {
  char buffer[65536];
  uint64_t kept = 0;
  bool said = false;
  while (true) {
    ssize_t n = ::read(0, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    uint64_t room = cap > kept ? cap - kept : 0;
    uint64_t take = std::min<uint64_t>(room, static_cast<uint64_t>(n));
    WriteAll(1, absl::string_view(buffer, take)).IgnoreError();
    kept += take;
    if (take < static_cast<uint64_t>(n) && !said) {
      WriteAll(1, absl::StrCat("\n[garuda-stager: the server's stderr past ",
                               cap, " bytes is dropped]\n"))
          .IgnoreError();
      said = true;
    }
  }
  ::_exit(0);
}

// Waits for `pid` at most `ms` milliseconds, then kills it and waits.
void Reap(pid_t pid, int ms, int* status) {
  for (int waited = 0; waited < ms; waited += 10) {
    pid_t got = ::waitpid(pid, status, WNOHANG);
    if (got == pid || (got < 0 && errno != EINTR)) return;
    struct timespec tick = {0, 10 * 1000 * 1000};
    ::nanosleep(&tick, nullptr);
  }
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, status, 0) < 0 && errno == EINTR) {
  }
}

std::string DescribeEnd(int status) {
  if (WIFEXITED(status)) {
    return absl::StrCat("its supervisor exited with ", WEXITSTATUS(status));
  }
  if (WIFSIGNALED(status)) {
    return absl::StrCat("stopped by signal ", WTERMSIG(status));
  }
  return "ended";
}

// What a change list entry leaves at its path once applied: a regular
// file or nothing; other kinds (links, folders) are not settled.
std::optional<Fingerprint> AfterChange(const ChangeEntry& entry) {
  Fingerprint after;
  after.set_type(entry.new_type());
  if (entry.new_type() == FILE_TYPE_ABSENT) return after;
  if (entry.new_type() != FILE_TYPE_REGULAR) return std::nullopt;
  after.set_mode(entry.new_mode());
  after.set_sha256(entry.new_sha256());
  return after;
}

// A server lives across lists, and the project changes between them when
// its previous list is applied: such a path was marked a conflict (it
// changed in the project since the last list), yet the server's view held
// that very content already. When the project is now exactly what the
// server's last list left there, the mark is taken back and the base is
// the project's state, as for a command. A person's edit, or anything else,
// stays a conflict.
void SettleOwnApplies(const std::string& project,
                      const std::map<std::string, Fingerprint>& listed,
                      ChangeSet* change_set, int* conflicts) {
  UniqueFd root;
  for (Change& change : change_set->changes) {
    if (change.entry.base().type() != FILE_TYPE_UNSPECIFIED) continue;
    auto it = listed.find(change.entry.path());
    if (it == listed.end()) continue;
    if (!root) {
      absl::StatusOr<UniqueFd> opened = OpenRoot(project);
      if (!opened.ok()) return;
      root = *std::move(opened);
    }
    absl::StatusOr<Fingerprint> now =
        FingerprintBeneath(root.get(), change.entry.path());
    if (!now.ok() || !SameFingerprint(*now, it->second)) continue;
    *change.entry.mutable_base() = *now;
    --*conflicts;
  }
}

}  // namespace

struct McpHost::Running {
  std::string name;
  pid_t supervisor = -1;
  pid_t pump = -1;
  bool ended = false;
  int status = 0;
  std::unique_ptr<StagedView> view;  // staged mode
  SandboxPolicy policy;
  struct timespec listed_at = {0, 0};
  std::string log;
  // Staged: each path of its lists as its last list left it, to tell an
  // apply of its own list from a person's edit (SettleOwnApplies).
  std::map<std::string, Fingerprint> listed;
  // With allowedDomains: its proxy, attached to its sandbox for its life.
  std::unique_ptr<netproxy::SessionProxy> proxy;
  std::unique_ptr<netproxy::SessionProxy::Run> attached;

  // Whether it still runs; reaps it once it ended.
  bool Alive() {
    if (ended) return false;
    pid_t got = ::waitpid(supervisor, &status, WNOHANG);
    if (got == supervisor) ended = true;
    return !ended;
  }

  // The sandbox's teardown runs in the supervisor on SIGTERM (RunInSandbox
  // ends the server and everything it started, then the supervisor dies of
  // the signal); the pump ends when the last writer of the stderr pipe is
  // gone.
  std::string Stop() {
    if (!ended) {
      ::kill(supervisor, SIGTERM);
      Reap(supervisor, 5000, &status);
      ended = true;
    }
    if (pump > 0) {
      int unused;
      Reap(pump, 2000, &unused);
      pump = -1;
    }
    if (attached) attached->End().IgnoreError();
    attached.reset();
    proxy.reset();
    view.reset();
    return DescribeEnd(status);
  }
};

McpHost::McpHost(McpHostOptions options) : options_(std::move(options)) {}

McpHost::~McpHost() { StopAll(); }

void McpHost::StopAll() {
  for (auto& [name, running] : running_) running->Stop();
  running_.clear();
}

absl::Status McpHost::Refused(const McpServer& server,
                              absl::string_view why) const {
  return absl::FailedPreconditionError(
      absl::StrCat("MCP server \"", server.name(), "\" (", server.source_file(),
                   ") is not started: ", why));
}

absl::StatusOr<std::string> VisibleProgram(const SandboxPolicy& policy,
                                           const std::string& command,
                                           const std::string& directory) {
  std::vector<std::string> candidates;
  if (command.find('/') != std::string::npos) {
    candidates.push_back(command[0] == '/' ? command
                                           : JoinPath(directory, command));
  } else {
    auto path = policy.environment().find("PATH");
    std::string search =
        path == policy.environment().end() ? kDefaultPath : path->second;
    for (absl::string_view dir : absl::StrSplit(search, ':')) {
      if (!dir.empty())
        candidates.push_back(JoinPath(std::string(dir), command));
    }
  }
  for (const std::string& candidate : candidates) {
    if (::access(candidate.c_str(), X_OK) != 0) continue;
    absl::StatusOr<std::string> real = RealPath(candidate, "program");
    if (!real.ok()) continue;
    if (Inside(*real, policy.project())) return candidate;
    for (const std::string& shown : policy.read_only_paths()) {
      if (Inside(*real, shown)) return candidate;
    }
    return absl::FailedPreconditionError(
        absl::StrCat("its program ", candidate,
                     *real == candidate ? "" : absl::StrCat(" (", *real, ")"),
                     " is outside what the sandbox shows (the project and ",
                     absl::StrJoin(policy.read_only_paths(), ", "),
                     "); install it there or in the project"));
  }
  return absl::NotFoundError(absl::StrCat(
      "its program \"", command, "\" is not found",
      command.find('/') != std::string::npos ? "" : " in the sandbox's PATH"));
}

absl::StatusOr<MergedSettings> McpHost::NetworkOf(
    const McpServer& server) const {
  const MergedSettings& session = *options_.settings;
  MergedSettings net = session;
  net.notices.clear();  // the session's own were said at its start
  net.network_access = NetworkAccess::kAllowList;
  SandboxSettings* sandbox = net.settings.mutable_sandbox();
  sandbox->clear_network();
  sandbox->clear_allowed_domains();
  const bool bounded = !session.allow_list_policy_source.empty();
  if (!bounded && !session.network_off_policy_source.empty()) {
    return Refused(server,
                   absl::StrCat(session.network_off_policy_source,
                                " turns the network off, so its allowedDomains "
                                "cannot be given"));
  }
  std::vector<std::string> dropped;
  for (const std::string& written : server.definition().allowed_domains()) {
    ASSIGN_OR_RETURN(std::string entry,
                     netproxy::DomainRules::NormalizeEntry(written));
    bool covered = !bounded;
    for (const std::string& wide :
         session.settings.sandbox().allowed_domains()) {
      covered = covered || netproxy::DomainRules::EntryCovers(wide, entry);
    }
    if (covered) {
      sandbox->add_allowed_domains(entry);
    } else {
      dropped.push_back(entry);
    }
  }
  if (!dropped.empty()) {
    net.notices.push_back(absl::StrCat("not allowed by ",
                                       session.allow_list_policy_source, ": ",
                                       absl::StrJoin(dropped, ", ")));
  }
  sandbox->clear_denied_domains();
  for (const std::string& entry : session.network_denied_domains) {
    sandbox->add_denied_domains(entry);
  }
  sandbox->clear_allowed_ports();
  for (uint32_t port : session.network_ports) sandbox->add_allowed_ports(port);
  return net;
}

absl::StatusOr<McpServerProxy> McpHost::StartProxy(
    const McpServer& server) const {
  ASSIGN_OR_RETURN(MergedSettings net, NetworkOf(server));
  std::vector<std::string> lines;
  absl::StatusOr<std::unique_ptr<netproxy::SessionProxy>> proxy =
      StartSessionProxy(net, options_.project, options_.self, &lines);
  if (!proxy.ok()) {
    return Refused(server, absl::StrCat("its network proxy did not start: ",
                                        proxy.status().message()));
  }
  McpServerProxy started;
  started.proxy = *std::move(proxy);
  ASSIGN_OR_RETURN(started.attached, started.proxy->Begin());
  started.allowed.assign(net.settings.sandbox().allowed_domains().begin(),
                         net.settings.sandbox().allowed_domains().end());
  started.network =
      absl::StrCat("network: only ", absl::StrJoin(started.allowed, ", "),
                   " through its proxy");
  for (const std::string& notice : net.notices) {
    absl::StrAppend(&started.network, " (", notice, ")");
  }
  return started;
}

absl::StatusOr<SandboxPolicy> McpHost::PolicyFor(const McpServer& server,
                                                 Running* running) {
  const McpServerSettings& d = server.definition();
  const std::string& project = options_.project;
  CommandRequest request;
  request.project = project;
  request.working_directory = project;
  if (!d.cwd().empty() && d.cwd() != ".") {
    std::string cwd = d.cwd()[0] == '/' ? d.cwd() : JoinPath(project, d.cwd());
    if (!Inside(cwd, project)) {
      return Refused(
          server, absl::StrCat("its cwd ", d.cwd(), " is outside the project ",
                               project, " (the only folder it may use)"));
    }
    request.working_directory = cwd;
  }

  SandboxPolicy policy;
  if (options_.mode == "staged") {
    if (!options_.staging_error.empty()) {
      return Refused(server, options_.staging_error);
    }
    StagedViewOptions view;
    view.project = project;
    view.backend = options_.backend;
    view.probe = options_.probe;
    absl::StatusOr<std::unique_ptr<StagedView>> opened =
        StagedView::Open(*options_.settings, view);
    if (!opened.ok()) return Refused(server, opened.status().message());
    running->view = *std::move(opened);
    ASSIGN_OR_RETURN(policy,
                     running->view->MountedPolicy(*options_.settings, request));
    if (d.write_scope_size() > 0) {
      // The view read-only but for the scope's entries that exist in it,
      // each reached without a link (a project could commit one that leads
      // out of the view, and a bind follows it).
      BindMount view_bind = policy.binds(policy.binds_size() - 1);
      ASSIGN_OR_RETURN(UniqueFd view_root, OpenRoot(view_bind.source()));
      absl::Status scoped = jobs::CheckScopeInWorktree(
          view_root.get(), {d.write_scope().begin(), d.write_scope().end()});
      if (!scoped.ok()) return Refused(server, scoped.message());
      policy.mutable_binds(policy.binds_size() - 1)->set_writable(false);
      for (const std::string& entry : d.write_scope()) {
        std::string source = JoinPath(view_bind.source(), entry);
        struct stat st;
        if (::lstat(source.c_str(), &st) != 0 ||
            !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
          continue;
        }
        BindMount* bind = policy.add_binds();
        bind->set_source(source);
        bind->set_target(JoinPath(project, entry));
        bind->set_writable(true);
      }
    }
  } else {
    ASSIGN_OR_RETURN(policy, DirectCommandPolicy(*options_.settings, request));
    if (d.write_scope_size() > 0) {
      ScopeProjectWrites({d.write_scope().begin(), d.write_scope().end()},
                         &policy);
    }
  }
  if (options_.narrow) options_.narrow(&policy);

  // Long-lived: no wall time (the agent's call timeouts bound the calls);
  // the other limits stay the session's.
  policy.mutable_limits()->set_wall_time_ms(0);
  // No network but through its own allow list: never the session's
  // (commands'), whatever sandbox.network says.
  policy.set_network(false);
  policy.clear_network_proxy();
  policy.set_seccomp_role("command");
  auto& env = *policy.mutable_environment();
  std::map<std::string, std::string> kept;
  for (const char* name : kPassed) {
    const char* value = std::getenv(name);
    if (value != nullptr) kept[name] = value;
  }
  if (!kept.count("PATH")) kept["PATH"] = kDefaultPath;
  env.clear();
  for (const auto& [name, value] : kept) env[name] = value;
  for (const auto& [name, value] : d.env()) env[name] = value;
  if (d.allowed_domains_size() > 0) {
    policy.mutable_network_proxy()->set_port(kSandboxProxyPort);
    policy.set_seccomp_role("command_proxied");
    SetProxyEnvironment(kSandboxProxyPort, &policy);
  }
  return policy;
}

absl::Status McpHost::Start(const McpServer& server,
                            stager::McpServerStarted* reply,
                            std::vector<UniqueFd>* fds) {
  // The agent's word is not taken for the definition's shape either.
  absl::Status checked =
      CheckMcpServerDefinition(server.name(), server.definition());
  if (!checked.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("StartMcpServer: ", checked.message()));
  }
  if (McpTransport(server.definition()) != "stdio") {
    return absl::InvalidArgumentError(absl::StrCat(
        "StartMcpServer: \"", server.name(),
        "\" is a remote server (url); the agent connects to it through the "
        "session's proxy, nothing is started"));
  }
  if (options_.problem) {
    std::optional<SandboxRequirement> required =
        RequiredSandbox(*options_.settings);
    return Refused(
        server,
        absl::StrCat("it cannot be sandboxed here: ", options_.problem->reason,
                     ". fix: ", options_.problem->fix, "; ",
                     required ? required->why
                              : "an MCP server runs only in the OS sandbox",
                     ", and a server is never started outside it"));
  }
  if (auto it = running_.find(server.name()); it != running_.end()) {
    it->second->Stop();
    running_.erase(it);
  }

  auto running = std::make_unique<Running>();
  running->name = server.name();
  ASSIGN_OR_RETURN(running->policy, PolicyFor(server, running.get()));
  const SandboxPolicy& policy = running->policy;
  const std::string directory = policy.working_directory().empty()
                                    ? policy.project()
                                    : policy.working_directory();
  absl::StatusOr<std::string> program =
      VisibleProgram(policy, server.definition().command(), directory);
  if (!program.ok()) {
    std::optional<SandboxRequirement> required =
        RequiredSandbox(*options_.settings);
    return Refused(
        server,
        absl::StrCat(program.status().message(),
                     required ? absl::StrCat(" (", required->why, ")") : ""));
  }

  std::string network = "no network";
  if (server.definition().allowed_domains_size() > 0) {
    ASSIGN_OR_RETURN(McpServerProxy proxy, StartProxy(server));
    running->proxy = std::move(proxy.proxy);
    running->attached = std::move(proxy.attached);
    network = std::move(proxy.network);
  }

  RETURN_IF_ERROR(MakeDirectories(options_.log_folder, 0700));
  running->log =
      JoinPath(options_.log_folder, absl::StrCat(server.name(), ".stderr.log"));
  ASSIGN_OR_RETURN(
      UniqueFd log,
      OpenFile(running->log, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600));
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return LastErrnoStatus("pipe (stdin)");
  UniqueFd in_r(in[0]), in_w(in[1]);
  if (::pipe2(out, O_CLOEXEC) != 0) return LastErrnoStatus("pipe (stdout)");
  UniqueFd out_r(out[0]), out_w(out[1]);
  if (::pipe2(err, O_CLOEXEC) != 0) return LastErrnoStatus("pipe (stderr)");
  UniqueFd err_r(err[0]), err_w(err[1]);

  const pid_t stager = ::getpid();
  pid_t pump = ::fork();
  if (pump < 0) return LastErrnoStatus("fork the stderr pump");
  if (pump == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != stager) ::_exit(1);
    if (::dup2(err_r.get(), 0) < 0 || ::dup2(log.get(), 1) < 0) ::_exit(1);
    KeepOnly(1);
    Pump(options_.stderr_cap);
  }
  running->pump = pump;
  err_r.Reset();
  log.Reset();

  std::vector<std::string> argv = {*program};
  argv.insert(argv.end(), server.definition().args().begin(),
              server.definition().args().end());
  pid_t supervisor = ::fork();
  if (supervisor < 0) {
    absl::Status forked = LastErrnoStatus("fork the server's supervisor");
    running->ended = true;
    running->Stop();
    return forked;
  }
  if (supervisor == 0) {
    // SIGTERM, not SIGKILL: RunInSandbox then ends the sandbox with it.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != stager) ::_exit(1);
    if (::dup2(in_r.get(), 0) < 0 || ::dup2(out_w.get(), 1) < 0 ||
        ::dup2(err_w.get(), 2) < 0) {
      ::_exit(1);
    }
    RunOptions run;
    run.argv = argv;
    if (running->attached) {
      if (::dup2(running->attached->handoff_fd(), 3) < 0) ::_exit(1);
      run.proxy_handoff_fd = 3;
    }
    KeepOnly(running->attached ? 3 : 2);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    absl::StatusOr<RunResult> ran = RunInSandbox(policy, run);
    // Its end, for the log (the agent sees its stdout close).
    WriteAll(2, absl::StrCat("\n[garuda-stager: MCP server ended: ",
                             ran.ok() ? ran->Describe()
                                      : std::string(ran.status().message()),
                             "]\n"))
        .IgnoreError();
    ::_exit(ran.ok() && ran->ok() ? 0 : 1);
  }
  running->supervisor = supervisor;
  running->listed_at = CommandStartLine();

  reply->set_name(server.name());
  reply->set_stderr_log(running->log);
  reply->set_sandboxed(true);
  reply->set_sandbox(absl::StrCat(
      "OS sandbox, ",
      options_.mode == "staged" ? "staged view of its own" : "direct mode",
      server.definition().write_scope_size() > 0
          ? absl::StrCat(", writes only ",
                         absl::StrJoin(server.definition().write_scope(), ", "))
          : "",
      ", ", network));
  fds->push_back(std::move(in_w));
  fds->push_back(std::move(out_r));
  running_[server.name()] = std::move(running);
  return absl::OkStatus();
}

absl::Status McpHost::Collect(const std::string& name,
                              stager::CommandResult* result,
                              std::optional<ChangeSet>* change_set,
                              int* conflicts) {
  auto it = running_.find(name);
  if (it == running_.end()) {
    return absl::NotFoundError(
        absl::StrCat("CollectMcpChanges: no MCP server \"", name,
                     "\" was started in this session"));
  }
  Running& running = *it->second;
  const bool alive = running.Alive();
  result->set_kind(alive || !WIFSIGNALED(running.status)
                       ? stager::CommandResult::EXITED
                       : stager::CommandResult::SIGNALED);
  result->set_description(alive
                              ? "the server runs"
                              : absl::StrCat("the server ended (",
                                             DescribeEnd(running.status), ")"));
  if (!running.view) return absl::OkStatus();  // direct mode
  const struct timespec now = CommandStartLine();
  ASSIGN_OR_RETURN(*change_set,
                   running.view->ListWrittenSince(
                       running.policy, absl::StrCat("MCP server ", name),
                       running.listed_at, /*only_written=*/true, conflicts));
  running.listed_at = now;
  SettleOwnApplies(options_.project, running.listed, &**change_set, conflicts);
  for (const Change& change : (*change_set)->changes) {
    std::optional<Fingerprint> after = AfterChange(change.entry);
    if (after) {
      running.listed[change.entry.path()] = *after;
    } else {
      running.listed.erase(change.entry.path());
    }
  }
  return absl::OkStatus();
}

absl::Status McpHost::Stop(const std::string& name,
                           stager::McpServerStopped* reply) {
  auto it = running_.find(name);
  if (it == running_.end()) {
    return absl::NotFoundError(absl::StrCat("StopMcpServer: no MCP server \"",
                                            name, "\" runs in this session"));
  }
  reply->set_description(it->second->Stop());
  running_.erase(it);
  return absl::OkStatus();
}

}  // namespace garuda
