#include "lib/crypto/note.h"

#include <algorithm>
#include <cstdio>
#include <functional>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "lib/base/sha256.h"
#include "lib/base/status_macros.h"

namespace garuda {
namespace {

constexpr absl::string_view kSignaturePrefix = "\xE2\x80\x94 ";
constexpr absl::string_view kPrivateKeyPrefix = "PRIVATE+KEY+";

absl::Status Malformed(absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("malformed note: ", why));
}

// Length of the UTF-8 sequence at `s[i]`, 0 when it is not valid (overlong
// forms, surrogates and values above U+10FFFF included).
size_t Utf8Length(absl::string_view s, size_t i, uint32_t* code_point) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  uint8_t b = byte(i);
  if (b < 0x80) {
    *code_point = b;
    return 1;
  }
  size_t length;
  uint32_t value, minimum;
  if ((b & 0xE0) == 0xC0) {
    length = 2, value = b & 0x1F, minimum = 0x80;
  } else if ((b & 0xF0) == 0xE0) {
    length = 3, value = b & 0x0F, minimum = 0x800;
  } else if ((b & 0xF8) == 0xF0) {
    length = 4, value = b & 0x07, minimum = 0x10000;
  } else {
    return 0;
  }
  if (i + length > s.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    value = (value << 6) | (byte(i + k) & 0x3F);
  }
  if (value < minimum || value > 0x10FFFF ||
      (value >= 0xD800 && value <= 0xDFFF)) {
    return 0;
  }
  *code_point = value;
  return length;
}

// Unicode's White_Space characters (what Go's unicode.IsSpace reports).
bool IsUnicodeSpace(uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::string KeyIdHex(uint32_t id) {
  char text[9];
  std::snprintf(text, sizeof(text), "%08x", id);
  return text;
}

absl::StatusOr<uint32_t> ParseKeyIdHex(absl::string_view text) {
  uint32_t id = 0;
  if (text.size() != 8) {
    return absl::InvalidArgumentError("a key id is 8 hex digits");
  }
  for (char c : text) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) {
      return absl::InvalidArgumentError("a key id is 8 hex digits");
    }
    id = id << 4 |
         static_cast<uint32_t>(absl::ascii_isdigit(c)
                                   ? c - '0'
                                   : absl::ascii_tolower(c) - 'a' + 10);
  }
  return id;
}

std::string BigEndian32(uint32_t value) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>(value >> (24 - 8 * i));
  return out;
}

uint64_t ReadBigEndian(absl::string_view bytes) {
  uint64_t value = 0;
  for (char c : bytes) value = value << 8 | static_cast<uint8_t>(c);
  return value;
}

std::string BigEndian64(uint64_t value) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(value >> (56 - 8 * i));
  return out;
}

std::string SignatureLine(absl::string_view name, uint32_t key_id,
                          absl::string_view signature) {
  return absl::StrCat(
      kSignaturePrefix, name, " ",
      Base64Encode(absl::StrCat(BigEndian32(key_id), signature)), "\n");
}

// The signatures of `note` by the key (name, key id), in order.
std::vector<const NoteSignature*> SignaturesBy(const Note& note,
                                               absl::string_view name,
                                               uint32_t key_id) {
  std::vector<const NoteSignature*> found;
  for (const NoteSignature& signature : note.signatures) {
    if (signature.name == name && signature.key_id == key_id) {
      found.push_back(&signature);
    }
  }
  return found;
}

std::string KeyLabel(const NoteVerifier& verifier) {
  return absl::StrCat(verifier.name, "+", KeyIdHex(verifier.key_id));
}

}  // namespace

std::string Base64Encode(absl::string_view data) {
  return absl::Base64Escape(data);
}

absl::StatusOr<std::string> Base64Decode(absl::string_view text) {
  std::string out;
  // absl's decoder forgives a missing padding and stray bits; re-encoding
  // and comparing keeps only the one canonical form.
  if (text.empty() || text.size() % 4 != 0 ||
      !absl::Base64Unescape(text, &out) || Base64Encode(out) != text) {
    return absl::InvalidArgumentError("not canonical standard base64");
  }
  return out;
}

uint32_t NoteKeyId(absl::string_view name, uint8_t type,
                   absl::string_view public_key) {
  Sha256 sha;
  const char type_byte = static_cast<char>(type);
  sha.Update(name).Update("\n").Update(absl::string_view(&type_byte, 1));
  sha.Update(public_key);
  Sha256Digest digest = sha.Finish();
  return static_cast<uint32_t>(digest[0]) << 24 |
         static_cast<uint32_t>(digest[1]) << 16 |
         static_cast<uint32_t>(digest[2]) << 8 | digest[3];
}

absl::Status CheckNoteKeyName(absl::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError("a key name is empty");
  for (size_t i = 0; i < name.size();) {
    uint32_t c = 0;
    size_t length = Utf8Length(name, i, &c);
    if (length == 0) {
      return absl::InvalidArgumentError("a key name is not valid UTF-8");
    }
    if (c == '+' || IsUnicodeSpace(c) || c < 0x20) {
      return absl::InvalidArgumentError(
          "a key name has no spaces, control characters or '+'");
    }
    i += length;
  }
  return absl::OkStatus();
}

// "<name>+<key id hex>+<base64>" (after any prefix): the name and the key id
// end at '+'; the base64 may hold '+' itself.
struct KeyParts {
  std::string name;
  uint32_t key_id = 0;
  std::string bytes;
};
absl::StatusOr<KeyParts> SplitKey(
    absl::string_view text,
    const std::function<absl::Status(absl::string_view)>& bad) {
  std::vector<absl::string_view> parts =
      absl::StrSplit(text, absl::MaxSplits('+', 2));
  if (parts.size() != 3) return bad("too few '+'");
  if (!CheckNoteKeyName(parts[0]).ok()) return bad("the name");
  absl::StatusOr<uint32_t> id = ParseKeyIdHex(parts[1]);
  if (!id.ok()) return bad("the key id");
  absl::StatusOr<std::string> bytes = Base64Decode(parts[2]);
  if (!bytes.ok()) return bad("the key's base64");
  return KeyParts{std::string(parts[0]), *id, std::move(*bytes)};
}

absl::StatusOr<NoteSigner> ParseNoteSigner(absl::string_view text) {
  const auto bad = [](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not a signing key (PRIVATE+KEY+<name>+<key id>+<base64>): ", why));
  };
  if (!absl::ConsumePrefix(&text, kPrivateKeyPrefix)) {
    return bad("no PRIVATE+KEY+ prefix");
  }
  ASSIGN_OR_RETURN(KeyParts parts, SplitKey(text, bad));
  std::string* key = &parts.bytes;
  if (key->size() != 1 + kEd25519SeedBytes ||
      static_cast<uint8_t>((*key)[0]) != kNoteEd25519) {
    return bad("not an Ed25519 key (type 0x01 and 32 bytes)");
  }
  absl::StatusOr<Ed25519PrivateKey> private_key =
      Ed25519PrivateKey::FromSeed(absl::string_view(*key).substr(1));
  std::fill(key->begin(), key->end(), '\0');
  if (!private_key.ok()) return private_key.status();
  NoteSigner signer{std::move(parts.name), parts.key_id,
                    std::move(*private_key)};
  if (NoteKeyId(signer.name, kNoteEd25519, signer.key.public_key()) !=
      parts.key_id) {
    return bad("the key id does not match the name and key");
  }
  return signer;
}

std::string FormatNoteSigner(const NoteSigner& signer) {
  const char type = static_cast<char>(kNoteEd25519);
  return absl::StrCat(kPrivateKeyPrefix, signer.name, "+",
                      KeyIdHex(signer.key_id), "+",
                      Base64Encode(absl::StrCat(absl::string_view(&type, 1),
                                                signer.key.seed())));
}

absl::StatusOr<NoteSigner> GenerateNoteSigner(absl::string_view name) {
  RETURN_IF_ERROR(CheckNoteKeyName(name));
  ASSIGN_OR_RETURN(Ed25519PrivateKey key, Ed25519PrivateKey::Generate());
  uint32_t id = NoteKeyId(name, kNoteEd25519, key.public_key());
  return NoteSigner{std::string(name), id, std::move(key)};
}

absl::StatusOr<NoteVerifier> ParseNoteVerifier(absl::string_view text) {
  const auto bad = [](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a verifier key (<name>+<key id>+<base64>): ", why));
  };
  ASSIGN_OR_RETURN(KeyParts parts, SplitKey(text, bad));
  std::string* key = &parts.bytes;
  if (key->size() != 1 + kEd25519PublicKeyBytes) {
    return bad("an Ed25519 key is a type byte and 32 bytes");
  }
  uint8_t type = static_cast<uint8_t>((*key)[0]);
  if (type != kNoteEd25519 && type != kNoteCosignatureV1) {
    return bad("an unknown key type (0x01 and 0x04 are known)");
  }
  NoteVerifier verifier{std::move(parts.name), parts.key_id, type,
                        key->substr(1)};
  if (NoteKeyId(verifier.name, type, verifier.public_key) != parts.key_id) {
    return bad("the key id does not match the name and key");
  }
  return verifier;
}

std::string FormatNoteVerifier(const NoteVerifier& verifier) {
  const char type = static_cast<char>(verifier.type);
  return absl::StrCat(verifier.name, "+", KeyIdHex(verifier.key_id), "+",
                      Base64Encode(absl::StrCat(absl::string_view(&type, 1),
                                                verifier.public_key)));
}

NoteVerifier VerifierOf(const NoteSigner& signer, uint8_t type) {
  return NoteVerifier{signer.name,
                      NoteKeyId(signer.name, type, signer.key.public_key()),
                      type, signer.key.public_key()};
}

absl::StatusOr<Note> ParseNote(absl::string_view message) {
  if (message.size() > kMaxNoteBytes) {
    return Malformed(absl::StrCat("longer than ", kMaxNoteBytes, " bytes"));
  }
  for (size_t i = 0; i < message.size();) {
    uint32_t c = 0;
    size_t length = Utf8Length(message, i, &c);
    if (length == 0) return Malformed("not valid UTF-8");
    if (c < 0x20 && c != '\n') return Malformed("a control character");
    i += length;
  }
  size_t split = message.rfind("\n\n");
  if (split == absl::string_view::npos) {
    return Malformed("no blank line before the signatures");
  }
  Note note;
  note.text = std::string(message.substr(0, split + 1));
  absl::string_view rest = message.substr(split + 2);
  if (rest.empty()) return Malformed("no signature");
  if (rest.back() != '\n') return Malformed("the last line has no newline");
  rest.remove_suffix(1);
  for (absl::string_view line : absl::StrSplit(rest, '\n')) {
    if (note.signatures.size() == kMaxNoteSignatures) {
      return Malformed(
          absl::StrCat("more than ", kMaxNoteSignatures, " signatures"));
    }
    absl::string_view body = line;
    if (!absl::ConsumePrefix(&body, kSignaturePrefix)) {
      return Malformed("a signature line does not start with \"— \"");
    }
    size_t space = body.find(' ');
    if (space == absl::string_view::npos) {
      return Malformed("a signature line without a space after its name");
    }
    absl::string_view name = body.substr(0, space);
    if (!CheckNoteKeyName(name).ok()) return Malformed("a key name");
    absl::StatusOr<std::string> bytes = Base64Decode(body.substr(space + 1));
    if (!bytes.ok() || bytes->size() < 5) {
      return Malformed("a signature is not base64 of a key id and bytes");
    }
    NoteSignature signature;
    signature.name = std::string(name);
    signature.key_id = static_cast<uint32_t>(
        ReadBigEndian(absl::string_view(*bytes).substr(0, 4)));
    signature.signature = bytes->substr(4);
    signature.line = absl::StrCat(line, "\n");
    note.signatures.push_back(std::move(signature));
  }
  return note;
}

absl::StatusOr<std::string> SignNoteLine(absl::string_view text,
                                         const NoteSigner& signer) {
  if (text.empty() || text.back() != '\n') {
    return absl::InvalidArgumentError("a note's text ends with a newline");
  }
  ASSIGN_OR_RETURN(std::string signature, signer.key.Sign(text));
  return SignatureLine(signer.name, signer.key_id, signature);
}

absl::StatusOr<std::string> SignNote(absl::string_view text,
                                     const NoteSigner& signer) {
  ASSIGN_OR_RETURN(std::string line, SignNoteLine(text, signer));
  return absl::StrCat(text, "\n", line);
}

absl::Status VerifyNoteSignature(const Note& note,
                                 const NoteVerifier& verifier) {
  if (verifier.type != kNoteEd25519) {
    return absl::InvalidArgumentError(absl::StrCat(
        KeyLabel(verifier), " is not a note signing key (type 0x01)"));
  }
  std::vector<const NoteSignature*> found =
      SignaturesBy(note, verifier.name, verifier.key_id);
  if (found.empty()) {
    return absl::NotFoundError(
        absl::StrCat("no signature by ", KeyLabel(verifier)));
  }
  for (const NoteSignature* signature : found) {
    if (!Ed25519Verify(verifier.public_key, note.text, signature->signature)) {
      return absl::PermissionDeniedError(
          absl::StrCat("invalid signature for key ", KeyLabel(verifier)));
    }
  }
  return absl::OkStatus();
}

std::string CosignatureMessage(absl::string_view note_text,
                               uint64_t timestamp) {
  return absl::StrCat("cosignature/v1\ntime ", timestamp, "\n", note_text);
}

absl::StatusOr<std::string> CosignNoteLine(absl::string_view note_text,
                                           const NoteSigner& signer,
                                           uint64_t timestamp) {
  if (timestamp > (uint64_t{1} << 63) - 1) {
    return absl::InvalidArgumentError("a cosignature's time is below 2^63");
  }
  ASSIGN_OR_RETURN(std::string signature,
                   signer.key.Sign(CosignatureMessage(note_text, timestamp)));
  NoteVerifier as_cosigner = VerifierOf(signer, kNoteCosignatureV1);
  return SignatureLine(signer.name, as_cosigner.key_id,
                       absl::StrCat(BigEndian64(timestamp), signature));
}

absl::StatusOr<uint64_t> VerifyCosignature(const Note& note,
                                           const NoteVerifier& verifier) {
  if (verifier.type != kNoteCosignatureV1) {
    return absl::InvalidArgumentError(
        absl::StrCat(KeyLabel(verifier), " is not a cosigner key (type 0x04)"));
  }
  std::vector<const NoteSignature*> found =
      SignaturesBy(note, verifier.name, verifier.key_id);
  if (found.empty()) {
    return absl::NotFoundError(
        absl::StrCat("no cosignature by ", KeyLabel(verifier)));
  }
  uint64_t latest = 0;
  for (const NoteSignature* signature : found) {
    absl::string_view bytes = signature->signature;
    uint64_t timestamp = bytes.size() == 8 + kEd25519SignatureBytes
                             ? ReadBigEndian(bytes.substr(0, 8))
                             : 0;
    if (bytes.size() != 8 + kEd25519SignatureBytes ||
        timestamp > (uint64_t{1} << 63) - 1 ||
        !Ed25519Verify(verifier.public_key,
                       CosignatureMessage(note.text, timestamp),
                       bytes.substr(8))) {
      return absl::PermissionDeniedError(
          absl::StrCat("invalid cosignature for key ", KeyLabel(verifier)));
    }
    latest = std::max(latest, timestamp);
  }
  return latest;
}

std::string FormatCheckpoint(const Checkpoint& checkpoint) {
  std::string text =
      absl::StrCat(checkpoint.origin, "\n", checkpoint.size, "\n",
                   Base64Encode(HashBytes(checkpoint.root)), "\n");
  for (const std::string& line : checkpoint.extensions) {
    absl::StrAppend(&text, line, "\n");
  }
  return text;
}

absl::StatusOr<Checkpoint> ParseCheckpoint(absl::string_view text) {
  const auto bad = [](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a tlog checkpoint: ", why));
  };
  if (text.empty() || text.back() != '\n') {
    return bad("the text does not end with a newline");
  }
  text.remove_suffix(1);
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  if (lines.size() < 3) return bad("fewer than three lines");
  Checkpoint checkpoint;
  if (lines[0].empty()) return bad("an empty origin");
  checkpoint.origin = std::string(lines[0]);
  absl::string_view size = lines[1];
  if (size.empty() || size.size() > 20 || (size.size() > 1 && size[0] == '0') ||
      !std::all_of(size.begin(), size.end(),
                   [](char c) { return c >= '0' && c <= '9'; }) ||
      !absl::SimpleAtoi(size, &checkpoint.size)) {
    return bad("the size is not a decimal number without leading zeros");
  }
  absl::StatusOr<std::string> root = Base64Decode(lines[2]);
  if (!root.ok() || root->size() != 32) {
    return bad("the root hash is not base64 of 32 bytes");
  }
  checkpoint.root = *HashFromBytes(*root);
  for (size_t i = 3; i < lines.size(); ++i) {
    if (lines[i].empty()) return bad("an empty extension line");
    checkpoint.extensions.emplace_back(lines[i]);
  }
  return checkpoint;
}

}  // namespace garuda
