// Which hosts a sandboxed command may reach through the proxy: the lists of
// sandbox.allowedDomains and sandbox.deniedDomains (issue 21). A name is
// checked before it is resolved, so what is allowed is a name, never
// whatever address a resolver gives for it.
#ifndef GARUDA_LIB_NETPROXY_DOMAIN_RULES_H_
#define GARUDA_LIB_NETPROXY_DOMAIN_RULES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace garuda {
namespace netproxy {

// One entry: "github.com" (that name only), "*.pythonhosted.org" (its
// subdomains only, not the name itself), or an IP literal ("10.0.0.8",
// "::1", matching only that address written that way).
class DomainRules {
 public:
  // Checks and normalizes every entry (lower case, no trailing dot).
  // INVALID_ARGUMENT names the list and the entry: "sandbox.allowedDomains[2]:
  // \"*example.com\": a wildcard is written \"*.\" before a name".
  static absl::StatusOr<DomainRules> Create(
      const std::vector<std::string>& allowed,
      const std::vector<std::string>& denied);

  enum class Verdict { kAllowed, kDenied, kNotListed };
  // For a host as a client wrote it (any case, a trailing dot, an IPv6
  // literal in brackets or not). A name that is not a valid host name (a
  // space, a NUL, an empty label) is kNotListed.
  Verdict Check(absl::string_view host) const;

  // The host in the form Check compares, or "" when it is not a valid host.
  static std::string Normalize(absl::string_view host);

  // One entry as written in a settings file, checked and normalized
  // ("*.Example.COM." -> "*.example.com"); the error says what is wrong
  // with it (without the list's name).
  static absl::StatusOr<std::string> NormalizeEntry(absl::string_view written);
  // Whether every host that normalized entry `narrow` allows is allowed by
  // normalized entry `wide` too ("*.github.com" covers "api.github.com" and
  // "*.api.github.com"; "github.com" covers only itself). For merging the
  // lists of several files: a project can only narrow.
  static bool EntryCovers(absl::string_view wide, absl::string_view narrow);

 private:
  struct Entry {
    std::string name;
    bool subdomains = false;  // "*.name"
  };
  static absl::StatusOr<Entry> ParseEntry(absl::string_view written);
  static bool Matches(const Entry& entry, absl::string_view host);

  std::vector<Entry> allowed_, denied_;
};

}  // namespace netproxy
}  // namespace garuda

#endif  // GARUDA_LIB_NETPROXY_DOMAIN_RULES_H_
