// The audit line: its canonical JSON form, its hash, and the fast reader
// that garuda-audit verify uses. docs/audit.md describes the same format for
// people; the golden vectors in testdata/ pin it.
//
//   {"v":1,"seq":S,"time":"T","prev":"P","event":E,"hash":"H"}\n
//
// H = SHA-256 of the same line without its `,"hash":"H"` member, that is of
// the bytes `{"v":1,...,"event":E}`. P is the previous line's H; for seq 1 it
// is GenesisHash(log name), so a line or a whole file cannot move to another
// log unnoticed.
#ifndef GARUDA_LIB_AUDIT_LINE_FORMAT_H_
#define GARUDA_LIB_AUDIT_LINE_FORMAT_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "proto/audit_log.pb.h"

namespace garuda {

inline constexpr int kAuditFormatVersion = 1;
// The kind of the line the auditor writes when it closes a log: a log that
// ends with it was closed cleanly, and its checkpoint (when on) is at it.
inline constexpr char kSessionEndKind[] = "session_end";
// A line longer than this is refused by the writer and by verify.
inline constexpr size_t kMaxAuditLineBytes = 1 << 20;

// Checks what the writer needs of an event: a kind, valid UTF-8 in every
// string, and a line under kMaxAuditLineBytes. The message names the field.
absl::Status ValidateEvent(const audit::AuditEvent& event);

// The canonical JSON of an event: members kind, tool, target, decision,
// reason always, in that order, then "fields" when it has any; object keys
// of "fields" sorted by their UTF-8 bytes; no spaces.
void AppendCanonicalEvent(const audit::AuditEvent& event, std::string* out);

// prev of seq 1: SHA-256("garuda audit genesis v1\n" + log name), hex.
std::string GenesisHash(absl::string_view log_name);

// "2026-11-29T22:03:00.123456Z"
std::string FormatAuditTime(absl::Time time);

// Appends one whole line (with its trailing newline) to `out` and returns
// its hash.
std::string AppendAuditLine(uint64_t seq, absl::Time time,
                            absl::string_view prev,
                            const audit::AuditEvent& event, std::string* out);

// What the verifier reads from one line (without its newline).
struct ParsedLine {
  enum class Kind {
    kOk,              // layout, version and hash all right
    kNotJson,         // the bytes are not one JSON object
    kUnknownVersion,  // JSON with a "v" other than 1
    kBadLayout,       // JSON, version 1, but not the canonical layout
    kBadUtf8,         // a string of the event is not valid UTF-8
    kBadHash,         // canonical layout, but the hash does not match
  };
  Kind kind = Kind::kNotJson;
  int version = 0;
  uint64_t seq = 0;
  absl::string_view prev;   // points into the line
  absl::string_view hash;   // the stored hash, points into the line
  absl::string_view event;  // the event's JSON, points into the line
};
ParsedLine ParseAuditLine(absl::string_view line);

// Appends `text` as a JSON string in the canonical escaping: `"` and `\`
// escaped, U+0000..U+001F as \b \f \n \r \t or \u00xx, everything else
// (valid UTF-8) as is.
void AppendJsonString(absl::string_view text, std::string* out);

// True when `text` is exactly one JSON value (RFC 8259), nesting at most 64.
bool IsJsonValue(absl::string_view text);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_LINE_FORMAT_H_
