#include "lib/agent/agent_lockdown.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/lockdown/landlock.h"

namespace garuda {
namespace agent {
namespace {

struct ParsedUrl {
  std::string scheme;  // lower case
  int port = 0;        // 0: not given
};

// scheme://[user@]host[:port][/...]; a URL without a scheme (as proxy
// variables often are) has scheme "".
absl::StatusOr<ParsedUrl> ParseUrl(absl::string_view url) {
  ParsedUrl parsed;
  absl::string_view rest = absl::StripAsciiWhitespace(url);
  size_t scheme_end = rest.find("://");
  if (scheme_end != absl::string_view::npos) {
    parsed.scheme = absl::AsciiStrToLower(rest.substr(0, scheme_end));
    rest.remove_prefix(scheme_end + 3);
  }
  rest = rest.substr(0, rest.find_first_of("/?#"));
  size_t at = rest.rfind('@');
  if (at != absl::string_view::npos) rest.remove_prefix(at + 1);
  absl::string_view port_text;
  if (absl::ConsumePrefix(&rest, "[")) {  // [::1]:8080
    size_t close = rest.find(']');
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("URL \"", url, "\": an IPv6 address without its ]"));
    }
    absl::string_view after = rest.substr(close + 1);
    if (absl::ConsumePrefix(&after, ":")) port_text = after;
    rest = rest.substr(0, close);
  } else {
    size_t colon = rest.rfind(':');
    if (colon != absl::string_view::npos) {
      port_text = rest.substr(colon + 1);
      rest = rest.substr(0, colon);
    }
  }
  if (rest.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("URL \"", url, "\" names no host"));
  }
  if (!port_text.empty()) {
    int port = 0;
    if (!absl::SimpleAtoi(port_text, &port) || port < 1 || port > 65535) {
      return absl::InvalidArgumentError(absl::StrCat(
          "URL \"", url, "\": port \"", port_text, "\" is not in 1..65535"));
    }
    parsed.port = port;
  }
  return parsed;
}

const char* FirstSet(const std::function<const char*(const char*)>& getenv,
                     std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* value = getenv(name);
    if (value != nullptr && value[0] != '\0') return value;
  }
  return nullptr;
}

// Creates `path` as an empty file readable by its owner only, unless it
// exists; it must not be a symbolic link (Landlock would follow it).
absl::Status EnsurePrivateFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(),
                     O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
                     0600));
  if (!fd) return LastErrnoStatus(absl::StrCat("open(", path, ")"));
  struct stat info;
  if (::fstat(fd.get(), &info) != 0) {
    return LastErrnoStatus(absl::StrCat("fstat(", path, ")"));
  }
  if (!S_ISREG(info.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is not a regular file"));
  }
  if (::fchmod(fd.get(), 0600) != 0) {
    return LastErrnoStatus(absl::StrCat("fchmod(", path, ", 0600)"));
  }
  return absl::OkStatus();
}

absl::Status CheckAbsolute(const std::string& path, absl::string_view what) {
  if (path.empty() || path[0] != '/') {
    return absl::InvalidArgumentError(absl::StrCat(
        "LockDownAgent: ", what, " \"", path, "\" must be an absolute path"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<int>> ProviderTcpPorts(
    const std::string& provider_url,
    const std::function<const char*(const char*)>& getenv) {
  ASSIGN_OR_RETURN(ParsedUrl url, ParseUrl(provider_url));
  if (url.scheme != "http" && url.scheme != "https") {
    return absl::InvalidArgumentError(absl::StrCat(
        "model base URL \"", provider_url,
        "\" must start with http:// or https:// (settings model.baseUrl or "
        "--base-url)"));
  }
  std::vector<int> ports = {url.port != 0           ? url.port
                            : url.scheme == "https" ? 443
                                                    : 80};
  // libcurl's own choice of proxy variable (http_proxy only in lower case).
  const char* proxy =
      url.scheme == "https"
          ? FirstSet(getenv,
                     {"https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"})
          : FirstSet(getenv, {"http_proxy", "all_proxy", "ALL_PROXY"});
  if (proxy != nullptr) {
    // NO_PROXY is not read: keeping the direct port too only allows more.
    ASSIGN_OR_RETURN(ParsedUrl proxy_url, ParseUrl(proxy));
    int port = proxy_url.port != 0           ? proxy_url.port
               : proxy_url.scheme == "https" ? 443
                                             : 1080;
    if (port != ports[0]) ports.push_back(port);
  }
  return ports;
}

absl::StatusOr<RoleNeeds> AgentNeeds(const AgentLockdown& what) {
  RETURN_IF_ERROR(CheckAbsolute(what.session_dir, "session folder"));
  RETURN_IF_ERROR(MakeDirectories(what.session_dir, 0700));
  RoleNeeds needs;
  needs.writable_paths = {what.session_dir};
  if (!what.history_path.empty()) {
    RETURN_IF_ERROR(CheckAbsolute(what.history_path, "history file"));
    RETURN_IF_ERROR(MakeDirectories(Dirname(what.history_path), 0700));
    RETURN_IF_ERROR(EnsurePrivateFile(what.history_path));
    needs.writable_paths.push_back(what.history_path);
  }
  // Without a model no port at all: then no IP socket either.
  if (!what.provider_url.empty()) {
    std::function<const char*(const char*)> getenv = what.getenv;
    if (!getenv) getenv = [](const char* name) { return std::getenv(name); };
    ASSIGN_OR_RETURN(needs.tcp_connect_ports,
                     ProviderTcpPorts(what.provider_url, getenv));
  }
  return needs;
}

namespace agent_lockdown_internal {

absl::Status LockDownAgentWithProbe(
    const AgentLockdown& what, LockdownReport* report,
    const lockdown_internal::LandlockAbiProbe& probe) {
  ASSIGN_OR_RETURN(RoleNeeds needs, AgentNeeds(what));
  ASSIGN_OR_RETURN(
      LockdownReport done,
      lockdown_internal::LockDownAsWithProbe(
          Role::kAgent, needs, {what.accept_weaker_lockdown, what.log}, probe));
  if (report != nullptr) *report = std::move(done);
  return absl::OkStatus();
}

}  // namespace agent_lockdown_internal

absl::Status LockDownAgent(const AgentLockdown& what, LockdownReport* report) {
  return agent_lockdown_internal::LockDownAgentWithProbe(what, report,
                                                         LandlockAbiVersion);
}

}  // namespace agent
}  // namespace garuda
