#include "lib/policy/network_merge.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/rules/domain_rules.h"

namespace garuda {
namespace {

using netproxy::DomainRules;

struct File {
  const Settings* settings;
  std::string path;
  bool policy;
};

// The entries of one list of one file, normalized; an error names the file,
// the list and the entry.
absl::StatusOr<std::vector<std::string>> Entries(
    const File& file, const char* list,
    const google::protobuf::RepeatedPtrField<std::string>& written) {
  std::vector<std::string> out;
  for (int i = 0; i < written.size(); ++i) {
    absl::StatusOr<std::string> entry = DomainRules::NormalizeEntry(written[i]);
    if (!entry.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(file.path, ": ", list, "[", i, "]: \"", written[i],
                       "\": ", entry.status().message()));
    }
    if (std::find(out.begin(), out.end(), *entry) == out.end()) {
      out.push_back(*std::move(entry));
    }
  }
  return out;
}

bool Covered(const std::vector<std::string>& by, const std::string& entry) {
  return std::any_of(by.begin(), by.end(), [&](const std::string& wide) {
    return DomainRules::EntryCovers(wide, entry);
  });
}

// The hosts both lists allow: each entry of one that the other covers.
std::vector<std::string> Intersect(const std::vector<std::string>& a,
                                   const std::vector<std::string>& b) {
  std::vector<std::string> out;
  auto add = [&](const std::string& entry) {
    if (std::find(out.begin(), out.end(), entry) == out.end()) {
      out.push_back(entry);
    }
  };
  for (const std::string& entry : a) {
    if (Covered(b, entry)) add(entry);
  }
  for (const std::string& entry : b) {
    if (Covered(a, entry)) add(entry);
  }
  return out;
}

absl::StatusOr<std::set<uint32_t>> Ports(const File& file) {
  std::set<uint32_t> ports;
  for (uint32_t port : file.settings->sandbox().allowed_ports()) {
    if (port == 0 || port > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat(file.path, ": sandbox.allowedPorts: ", port,
                       " is not a port (1 to 65535)"));
    }
    ports.insert(port);
  }
  return ports;
}

}  // namespace

absl::StatusOr<MergedNetwork> MergeNetwork(const SettingsSources& s,
                                           std::optional<bool> person_network,
                                           bool network_on,
                                           SandboxSettings* sandbox) {
  auto name = [](const std::string& path, const char* fallback) {
    return path.empty() ? std::string(fallback) : path;
  };
  const std::vector<File> person = {
      {&s.managed_policy, name(s.managed_policy_path, "the managed policy"),
       true},
      {&s.user_policy, name(s.user_policy_path, "the user's policy"), true},
      {&s.user_settings, name(s.user_settings_path, "the user's settings"),
       false},
  };
  const File project{&s.project_settings,
                     name(s.project_settings_path, "the project's settings"),
                     false};

  MergedNetwork merged;
  std::optional<std::vector<std::string>> allowed;  // the person's
  std::string allowed_from;
  std::vector<std::string> denied;
  std::optional<std::set<uint32_t>> ports;
  std::vector<const File*> listing;  // the person's files with a list

  for (const File* file : {&person[0], &person[1], &person[2], &project}) {
    const SandboxSettings& in = file->settings->sandbox();
    if (in.has_network() && in.network() && in.allowed_domains_size() > 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          file->path,
          ": sandbox.network true and sandbox.allowedDomains say two things: "
          "true gives a command all of the network; keep the list alone to "
          "allow only its hosts"));
    }
    absl::StatusOr<std::vector<std::string>> deny =
        Entries(*file, "sandbox.deniedDomains", in.denied_domains());
    if (!deny.ok()) return deny.status();
    for (std::string& entry : *deny) {
      if (std::find(denied.begin(), denied.end(), entry) == denied.end()) {
        denied.push_back(std::move(entry));
      }
    }
  }

  for (const File& file : person) {
    const SandboxSettings& in = file.settings->sandbox();
    absl::StatusOr<std::vector<std::string>> list =
        Entries(file, "sandbox.allowedDomains", in.allowed_domains());
    if (!list.ok()) return list.status();
    if (!list->empty()) {
      listing.push_back(&file);
      if (file.policy && merged.allow_list_policy_source.empty()) {
        merged.allow_list_policy_source = file.path;
      }
      allowed = allowed ? Intersect(*allowed, *list) : *list;
      absl::StrAppend(&allowed_from, allowed_from.empty() ? "" : " and ",
                      file.path);
    }
    absl::StatusOr<std::set<uint32_t>> file_ports = Ports(file);
    if (!file_ports.ok()) return file_ports.status();
    if (!file_ports->empty()) {
      if (!ports) {
        ports = *file_ports;
      } else {
        std::set<uint32_t> both;
        std::set_intersection(ports->begin(), ports->end(),
                              file_ports->begin(), file_ports->end(),
                              std::inserter(both, both.begin()));
        ports = both;
      }
    }
  }

  NetworkAccess access = NetworkAccess::kOff;
  if (person_network.has_value() && !*person_network) {
    for (const File* file : listing) {
      merged.notices.push_back(absl::StrCat(
          file->path,
          ": sandbox.allowedDomains is ignored: the network is off for "
          "commands (sandbox.network false in your files)"));
    }
    merged.allow_list_policy_source.clear();
  } else if (allowed) {
    access = NetworkAccess::kAllowList;
  } else if (person_network.value_or(false)) {
    access = NetworkAccess::kFull;
  }

  // The project: it can only narrow.
  const SandboxSettings& in = project.settings->sandbox();
  absl::StatusOr<std::vector<std::string>> project_list =
      Entries(project, "sandbox.allowedDomains", in.allowed_domains());
  if (!project_list.ok()) return project_list.status();
  auto ignored = [&](const std::string& what, const std::string& why) {
    merged.notices.push_back(absl::StrCat(
        project.path, ": ", what, " is ignored: ", why,
        ", and a project's settings can only narrow what a command may do; "
        "set it in ~/.garuda/settings.json to allow it"));
  };
  if (in.has_network() && !in.network()) access = NetworkAccess::kOff;
  if (!network_on && access == NetworkAccess::kFull) access = NetworkAccess::kOff;
  if (!project_list->empty()) {
    if (access == NetworkAccess::kOff) {
      ignored("sandbox.allowedDomains", "the network is off for commands");
    } else if (access == NetworkAccess::kFull) {
      access = NetworkAccess::kAllowList;
      allowed = *project_list;
    } else {
      for (const std::string& entry : *project_list) {
        if (!Covered(*allowed, entry)) {
          ignored(absl::StrCat("sandbox.allowedDomains \"", entry, "\""),
                  absl::StrCat("it is not allowed by ", allowed_from));
        }
      }
      allowed = Intersect(*allowed, *project_list);
    }
  }
  absl::StatusOr<std::set<uint32_t>> project_ports = Ports(project);
  if (!project_ports.ok()) return project_ports.status();
  std::set<uint32_t> effective_ports = ports.value_or(std::set<uint32_t>{80, 443});
  if (!project_ports->empty()) {
    std::set<uint32_t> kept;
    for (uint32_t port : *project_ports) {
      if (effective_ports.count(port)) {
        kept.insert(port);
      } else {
        ignored(absl::StrCat("sandbox.allowedPorts ", port),
                absl::StrCat("your files allow only ",
                             absl::StrJoin(effective_ports, ", ")));
      }
    }
    effective_ports = kept;
  }

  merged.access = access;
  merged.denied_domains.assign(denied.begin(), denied.end());
  merged.ports.assign(effective_ports.begin(), effective_ports.end());
  sandbox->clear_allowed_domains();
  sandbox->clear_denied_domains();
  sandbox->clear_allowed_ports();
  sandbox->set_network(access == NetworkAccess::kFull);
  if (access == NetworkAccess::kAllowList) {
    for (const std::string& entry : *allowed) sandbox->add_allowed_domains(entry);
    for (const std::string& entry : denied) sandbox->add_denied_domains(entry);
    for (uint32_t port : effective_ports) sandbox->add_allowed_ports(port);
  } else {
    merged.allow_list_policy_source.clear();
  }
  // Allowed hosts audited too when any of the person's files asks.
  bool audit_allowed = false;
  for (const File& file : person) {
    audit_allowed |= file.settings->sandbox().audit_allowed_hosts();
  }
  sandbox->set_audit_allowed_hosts(audit_allowed);
  return merged;
}

}  // namespace garuda
