#include "lib/rules/domain_rules.h"

#include <arpa/inet.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace garuda {
namespace netproxy {
namespace {

bool IsIpLiteral(const std::string& host) {
  unsigned char buffer[16];
  return ::inet_pton(AF_INET, host.c_str(), buffer) == 1 ||
         ::inet_pton(AF_INET6, host.c_str(), buffer) == 1;
}

// RFC 1123 labels: letters, digits and '-', 1 to 63 each, not starting or
// ending with '-'; 253 characters in all. '_' is allowed too: real services
// use it in names (_dmarc, some CDN hosts).
bool IsHostName(absl::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  for (absl::string_view label : absl::StrSplit(name, '.')) {
    if (label.empty() || label.size() > 63) return false;
    if (label.front() == '-' || label.back() == '-') return false;
    for (char c : label) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

std::string DomainRules::Normalize(absl::string_view host) {
  std::string text = absl::AsciiStrToLower(host);
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  if (IsIpLiteral(text)) {
    // One spelling per address: "::0001" and "::1" are the same host.
    unsigned char buffer[16];
    char out[INET6_ADDRSTRLEN];
    int family = absl::StrContains(text, ':') ? AF_INET6 : AF_INET;
    ::inet_pton(family, text.c_str(), buffer);
    ::inet_ntop(family, buffer, out, sizeof out);
    return out;
  }
  if (absl::EndsWith(text, ".")) text.pop_back();
  return IsHostName(text) ? text : "";
}

absl::StatusOr<DomainRules::Entry> DomainRules::ParseEntry(
    absl::string_view written) {
  Entry entry;
  absl::string_view name = written;
  if (absl::ConsumePrefix(&name, "*.")) {
    entry.subdomains = true;
  } else if (absl::StrContains(name, '*')) {
    return absl::InvalidArgumentError(
        "a wildcard is written \"*.\" before a name (\"*.example.com\": its "
        "subdomains)");
  }
  if (absl::StrContains(name, ':') && !entry.subdomains &&
      !IsIpLiteral(std::string(absl::StripPrefix(absl::StripSuffix(name, "]"), "[")))) {
    return absl::InvalidArgumentError(
        "a port is not part of an entry (see sandbox.allowedPorts)");
  }
  entry.name = Normalize(name);
  if (entry.name.empty()) {
    return absl::InvalidArgumentError("not a host name or an IP address");
  }
  if (entry.subdomains && IsIpLiteral(entry.name)) {
    return absl::InvalidArgumentError("an IP address has no subdomains");
  }
  if (!entry.subdomains && !IsIpLiteral(entry.name) &&
      !absl::StrContains(entry.name, '.') && entry.name != "localhost") {
    return absl::InvalidArgumentError(
        "a top-level name alone would allow too much; name the host");
  }
  return entry;
}

absl::StatusOr<std::string> DomainRules::NormalizeEntry(
    absl::string_view written) {
  absl::StatusOr<Entry> entry = ParseEntry(written);
  if (!entry.ok()) return entry.status();
  return entry->subdomains ? absl::StrCat("*.", entry->name) : entry->name;
}

bool DomainRules::EntryCovers(absl::string_view wide, absl::string_view narrow) {
  Entry a, b;
  a.subdomains = absl::ConsumePrefix(&wide, "*.");
  b.subdomains = absl::ConsumePrefix(&narrow, "*.");
  a.name = std::string(wide);
  b.name = std::string(narrow);
  if (!a.subdomains) return !b.subdomains && a.name == b.name;
  // "*.x" covers "y.x" and "*.y.x", and "*.x" itself.
  return (b.subdomains && b.name == a.name) || Matches(a, b.name);
}

absl::StatusOr<DomainRules> DomainRules::Create(
    const std::vector<std::string>& allowed,
    const std::vector<std::string>& denied) {
  DomainRules rules;
  for (auto [list, entries, out] :
       {std::make_tuple("sandbox.allowedDomains", &allowed, &rules.allowed_),
        std::make_tuple("sandbox.deniedDomains", &denied, &rules.denied_)}) {
    for (size_t i = 0; i < entries->size(); ++i) {
      const std::string& written = (*entries)[i];
      absl::StatusOr<Entry> entry = ParseEntry(written);
      if (!entry.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            list, "[", i, "]: \"", written, "\": ", entry.status().message()));
      }
      out->push_back(*std::move(entry));
    }
  }
  return rules;
}

bool DomainRules::Matches(const Entry& entry, absl::string_view host) {
  if (!entry.subdomains) return host == entry.name;
  return host.size() > entry.name.size() + 1 && absl::EndsWith(host, entry.name) &&
         host[host.size() - entry.name.size() - 1] == '.';
}

DomainRules::Verdict DomainRules::Check(absl::string_view host) const {
  const std::string normal = Normalize(host);
  if (normal.empty()) return Verdict::kNotListed;
  for (const Entry& entry : denied_) {
    if (Matches(entry, normal)) return Verdict::kDenied;
  }
  for (const Entry& entry : allowed_) {
    if (Matches(entry, normal)) return Verdict::kAllowed;
  }
  return Verdict::kNotListed;
}

}  // namespace netproxy
}  // namespace garuda
