// A strict, fast reader of one audit event in JSON, for `garuda-auditor
// append`: the general reader in lib/base (protobuf's JSON parser, run
// twice) manages about 10 000 events a second, this one several hundred
// thousand. It reads AuditEvent as the general reader does and refuses the
// same things, with messages of the same shape; it is stricter only where
// RFC 8259 is (a trailing comma, a raw control character in a string).
#ifndef GARUDA_LIB_AUDIT_EVENT_JSON_H_
#define GARUDA_LIB_AUDIT_EVENT_JSON_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "proto/audit_log.pb.h"

namespace garuda {

// Parses one JSON object into `event` (cleared first). Errors:
// "not a JSON object: ... at byte N", "unknown field \"x\"", "field \"tool\"
// must be a string, not a number", "field \"x\" appears twice". UTF-8 is
// checked later, by ValidateEvent.
absl::Status ParseEventJson(absl::string_view json, audit::AuditEvent* event);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_EVENT_JSON_H_
