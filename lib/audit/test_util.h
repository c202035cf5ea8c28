// Helpers for the audit tests: events and small logs built in memory.
#ifndef GARUDA_LIB_AUDIT_TEST_UTIL_H_
#define GARUDA_LIB_AUDIT_TEST_UTIL_H_

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "lib/audit/line_format.h"
#include "proto/audit_log.pb.h"

namespace garuda {

inline audit::AuditEvent TestEvent(int i) {
  audit::AuditEvent event;
  event.set_kind("tool_call");
  event.set_tool(i % 2 ? "bash" : "edit_file");
  event.set_target(absl::StrCat("src/file", i, ".ts"));
  event.set_decision(i % 3 ? "allow" : "ask");
  event.set_reason(absl::StrCat("secret reason ", i));
  return event;
}

// A whole log of `lines` lines named `log`, times from 2026-11-29 22:00 UTC.
inline std::string TestLog(const std::string& log, int lines,
                           std::vector<std::string>* hashes = nullptr) {
  std::string content;
  std::string prev = GenesisHash(log);
  for (int i = 1; i <= lines; ++i) {
    absl::Time time = absl::FromUnixSeconds(1795989600) + absl::Milliseconds(i);
    prev = AppendAuditLine(i, time, prev, TestEvent(i), &content);
    if (hashes != nullptr) hashes->push_back(prev);
  }
  return content;
}

// The lines of `content`, each with its newline.
inline std::vector<std::string> SplitLines(const std::string& content) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < content.size()) {
    size_t end = content.find('\n', start);
    if (end == std::string::npos) end = content.size() - 1;
    lines.push_back(content.substr(start, end + 1 - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_TEST_UTIL_H_
