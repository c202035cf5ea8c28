// The fixture of the tests that run garuda-auditor and garuda-audit as real
// programs, each test with its own HOME under $TEST_TMPDIR (never the real
// ~/.garuda) and an empty managed-policy folder.
#ifndef GARUDA_TESTS_AUDIT_AUDIT_FIXTURE_H_
#define GARUDA_TESTS_AUDIT_AUDIT_FIXTURE_H_

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/strings/str_replace.h"
#include "lib/audit/line_format.h"
#include "lib/base/files.h"
#include "lib/base/sha256.h"
#include "lib/ipc/helper_process.h"
#include "proto/audit_log.pb.h"
#include "proto/auditor_service.pb.h"

namespace garuda {
namespace testing_audit {

using ::testing::HasSubstr;
using ::testing::Not;

inline std::string Runfile(const std::string& path) {
  return JoinPath(JoinPath(std::getenv("TEST_SRCDIR"), "garuda"), path);
}
inline std::string Auditor() { return Runfile("cmd/garuda-auditor/garuda-auditor"); }
inline std::string Audit() { return Runfile("cmd/garuda-audit/garuda-audit"); }

inline std::string Quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

inline void WriteFile(const std::string& path, const std::string& content) {
  ASSERT_TRUE(MakeDirectories(Dirname(path), 0700).ok());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}
inline std::string ReadFile(const std::string& path) {
  absl::StatusOr<std::string> content = ReadFileToString(path);
  return content.ok() ? *content : "";
}

struct RunResult {
  int exit_code = -1;
  std::string out, err;
};

class AuditProgramsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = JoinPath(
        std::getenv("TEST_TMPDIR"),
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    home_ = JoinPath(base_, "home");
    project_ = JoinPath(base_, "project");
    ASSERT_TRUE(MakeDirectories(home_, 0755).ok());
    ASSERT_TRUE(MakeDirectories(project_, 0755).ok());
    ASSERT_TRUE(MakeDirectories(JoinPath(base_, "etc"), 0755).ok());
    setenv("HOME", home_.c_str(), 1);
    setenv("GARUDA_MANAGED_POLICY_DIR", JoinPath(base_, "etc").c_str(), 1);
  }

  // Runs a shell command line; stdin from `input`.
  RunResult Shell(const std::string& command, const std::string& input = "") {
    std::string in = JoinPath(base_, "stdin"), out = JoinPath(base_, "stdout"),
                err = JoinPath(base_, "stderr");
    WriteFile(in, input);
    std::string line = absl::StrCat(command, " <", Quote(in), " >", Quote(out),
                                    " 2>", Quote(err));
    int status = std::system(line.c_str());
    RunResult run;
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    run.out = ReadFile(out);
    run.err = ReadFile(err);
    return run;
  }
  RunResult Append(const std::string& events, const std::string& extra = "") {
    return Shell(absl::StrCat(Quote(Auditor()), " append --project ",
                              Quote(project_), " ", extra),
                 events);
  }
  RunResult Verify(const std::string& extra = "") {
    return Shell(absl::StrCat(Quote(Audit()), " verify --project ",
                              Quote(project_), " ", extra));
  }
  void Policy(const std::string& audit_json) {
    WriteFile(JoinPath(home_, ".garuda/policy.json"),
              absl::StrCat("{\"audit\": ", audit_json, "}"));
  }
  // The project's audit folder (there is one per project).
  std::string Folder() {
    std::string root = JoinPath(home_, ".garuda/audit");
    DIR* dir = ::opendir(root.c_str());
    if (dir == nullptr) return "";
    std::string found;
    while (struct dirent* entry = ::readdir(dir)) {
      if (entry->d_name[0] != '.') found = JoinPath(root, entry->d_name);
    }
    ::closedir(dir);
    return found;
  }
  std::vector<std::string> Logs() {
    std::vector<std::string> logs;
    DIR* dir = ::opendir(Folder().c_str());
    if (dir == nullptr) return logs;
    while (struct dirent* entry = ::readdir(dir)) {
      std::string name = entry->d_name;
      if (name.size() > 6 && name.substr(name.size() - 6) == ".jsonl") {
        logs.push_back(JoinPath(Folder(), name));
      }
    }
    ::closedir(dir);
    return logs;
  }
  std::string CheckpointOf(const std::string& log) {
    std::string name = Basename(log);
    return JoinPath(JoinPath(Folder(), "checkpoints"),
                    name.substr(0, name.size() - 6) + ".json");
  }
  std::unique_ptr<ipc::HelperProcess> Serve() {
    ipc::HelperOptions options;
    options.argv = {Auditor(), "serve", "--channel-fd=3", "--project",
                    project_};
    absl::StatusOr<std::unique_ptr<ipc::HelperProcess>> helper =
        ipc::HelperProcess::Spawn(options);
    EXPECT_TRUE(helper.ok()) << helper.status();
    return helper.ok() ? std::move(helper).value() : nullptr;
  }
  absl::StatusOr<audit::AuditReply> AppendOverChannel(ipc::HelperProcess& helper,
                                               int first, int count,
                                               bool durable) {
    audit::AuditRequest request;
    request.set_seq(++seq_);
    for (int i = first; i < first + count; ++i) {
      audit::AuditEvent* event = request.mutable_append()->add_events();
      event->set_kind("command");
      event->set_tool("bash");
      event->set_target(absl::StrCat("make target", i));
      event->set_reason(absl::StrCat("reason text ", i));
    }
    request.mutable_append()->set_durable(durable);
    audit::AuditReply reply;
    absl::Status status = helper.Call(request, &reply);
    if (!status.ok()) return status;
    return reply;
  }
  absl::Status CloseOverChannel(ipc::HelperProcess& helper) {
    audit::AuditRequest request;
    request.set_seq(++seq_);
    request.mutable_close();
    audit::AuditReply reply;
    absl::Status status = helper.Call(request, &reply);
    if (!status.ok()) return status;
    if (reply.has_error()) return absl::InternalError(reply.error().message());
    return helper.Stop();
  }

  std::string base_, home_, project_;
  uint64_t seq_ = 0;
};

inline std::string Events(int first, int count) {
  std::string out;
  for (int i = first; i < first + count; ++i) {
    absl::StrAppend(&out,
                    "{\"kind\":\"command\",\"tool\":\"bash\",\"target\":"
                    "\"rm -rf build",
                    i,
                    "\",\"decision\":\"allow\","
                    "\"reason\":\"secret reason ",
                    i, "\"}\n");
  }
  return out;
}

inline void CutLastLine(const std::string& path) {
  std::string content = ReadFile(path);
  content.pop_back();
  WriteFile(path, content.substr(0, content.rfind('\n') + 1));
}

// "<name>:\t<value>" of /proc/<pid>/status.
inline std::string ProcStatus(const std::string& pid, const std::string& name) {
  std::string status = ReadFile(absl::StrCat("/proc/", pid, "/status"));
  size_t at = status.find("\n" + name + ":");
  if (at == std::string::npos) return "";
  size_t start = status.find_first_not_of(" \t", at + name.size() + 2);
  return status.substr(start, status.find('\n', start) - start);
}

// Replaces `from` by `to` in every line of the log at `path` and recomputes
// every line's prev and hash, as someone who rewrites a log would.
inline void RewriteAndRechain(const std::string& path,
                              const std::string& log_name,
                              const std::string& from, const std::string& to) {
  std::string prev = GenesisHash(log_name);
  std::string out;
  for (absl::string_view line : absl::StrSplit(ReadFile(path), '\n')) {
    if (line.empty()) continue;
    std::string changed = absl::StrReplaceAll(line, {{from, to}});
    size_t prev_at = changed.find("\"prev\":\"") + 8;
    changed.replace(prev_at, 64, prev);
    size_t hash_at = changed.rfind(",\"hash\":\"");
    std::string body = changed.substr(0, hash_at) + "}";
    prev = Sha256Hex(body);
    absl::StrAppend(&out, changed.substr(0, hash_at), ",\"hash\":\"", prev,
                    "\"}\n");
  }
  WriteFile(path, out);
}

}  // namespace testing_audit
}  // namespace garuda

#endif  // GARUDA_TESTS_AUDIT_AUDIT_FIXTURE_H_
