// C2SP signed notes (c2sp.org/signed-note) with Ed25519 signatures, their
// keys in the text forms of Go's golang.org/x/mod/sumdb/note, the
// checkpoints of c2sp.org/tlog-checkpoint, and the timestamped Ed25519
// cosignatures of c2sp.org/tlog-cosignature (cosignature/v1).
#ifndef GARUDA_LIB_CRYPTO_NOTE_H_
#define GARUDA_LIB_CRYPTO_NOTE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/crypto/ed25519.h"
#include "lib/crypto/merkle.h"

namespace garuda {

// Signature type bytes of c2sp.org/signed-note.
inline constexpr uint8_t kNoteEd25519 = 0x01;
inline constexpr uint8_t kNoteCosignatureV1 = 0x04;

// A note's size is capped so that a verifier never holds much of what a
// stranger sent (the spec asks for at least 16 signatures to be accepted).
inline constexpr size_t kMaxNoteBytes = 64 * 1024;
inline constexpr size_t kMaxNoteSignatures = 100;

// SHA-256(name || "\n" || type || public_key)[:4], big-endian.
uint32_t NoteKeyId(absl::string_view name, uint8_t type,
                   absl::string_view public_key);

// A key name: non-empty, valid UTF-8, no Unicode space, no '+'.
absl::Status CheckNoteKeyName(absl::string_view name);

// A signing key: "PRIVATE+KEY+<name>+<key id hex>+<base64(0x01 || seed)>".
struct NoteSigner {
  std::string name;
  uint32_t key_id = 0;  // for type 0x01
  Ed25519PrivateKey key;
};
absl::StatusOr<NoteSigner> ParseNoteSigner(absl::string_view text);
std::string FormatNoteSigner(const NoteSigner& signer);
// A new key; `signer` is filled.
absl::StatusOr<NoteSigner> GenerateNoteSigner(absl::string_view name);

// A verifier key: "<name>+<key id hex>+<base64(type || public key)>", type
// 0x01 (a log's note signatures) or 0x04 (a witness's cosignatures).
struct NoteVerifier {
  std::string name;
  uint32_t key_id = 0;
  uint8_t type = kNoteEd25519;
  std::string public_key;  // 32 bytes
};
absl::StatusOr<NoteVerifier> ParseNoteVerifier(absl::string_view text);
std::string FormatNoteVerifier(const NoteVerifier& verifier);
// The verifier of `signer` for `type` (the same Ed25519 key; the key id
// depends on the type).
NoteVerifier VerifierOf(const NoteSigner& signer, uint8_t type);

struct NoteSignature {
  std::string name;
  uint32_t key_id = 0;
  std::string signature;  // the bytes after the key id
  std::string line;       // "— name base64\n", as it was
};

struct Note {
  std::string text;  // ends with "\n"; without the blank line
  std::vector<NoteSignature> signatures;
};

// Splits a signed note, checking the syntax of the spec (valid UTF-8, no
// control characters but newline, at least one well-formed signature line,
// at most kMaxNoteSignatures of them, at most kMaxNoteBytes).
absl::StatusOr<Note> ParseNote(absl::string_view message);

// The signature line of `signer` over `text` (which must end with "\n").
absl::StatusOr<std::string> SignNoteLine(absl::string_view text,
                                         const NoteSigner& signer);
// text + "\n" + the signature line.
absl::StatusOr<std::string> SignNote(absl::string_view text,
                                     const NoteSigner& signer);

// True when one signature of `note` is a valid Ed25519 (type 0x01)
// signature by `verifier`. A signature whose name and key id match the
// verifier but does not verify is an error (PERMISSION_DENIED), as the spec
// asks; none from the key is NOT_FOUND.
absl::Status VerifyNoteSignature(const Note& note,
                                 const NoteVerifier& verifier);

// cosignature/v1: the signed message for `note_text` at `timestamp`.
std::string CosignatureMessage(absl::string_view note_text, uint64_t timestamp);
// The cosignature line of `signer` (as a cosigner, key id with 0x04).
absl::StatusOr<std::string> CosignNoteLine(absl::string_view note_text,
                                           const NoteSigner& signer,
                                           uint64_t timestamp);
// Finds and checks the cosignature of `verifier` (type 0x04) in `note`;
// returns its timestamp. Errors as VerifyNoteSignature.
absl::StatusOr<uint64_t> VerifyCosignature(const Note& note,
                                           const NoteVerifier& verifier);

// A c2sp.org/tlog-checkpoint body.
struct Checkpoint {
  std::string origin;
  uint64_t size = 0;
  MerkleHash root{};
  std::vector<std::string> extensions;
};
std::string FormatCheckpoint(const Checkpoint& checkpoint);
absl::StatusOr<Checkpoint> ParseCheckpoint(absl::string_view text);

// Standard base64 (RFC 4648 section 4), strict: padding required, no
// other characters, the canonical encoding only.
std::string Base64Encode(absl::string_view data);
absl::StatusOr<std::string> Base64Decode(absl::string_view text);

}  // namespace garuda

#endif  // GARUDA_LIB_CRYPTO_NOTE_H_
