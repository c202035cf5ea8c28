#include "lib/crypto/note.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace garuda {
namespace {

// Vectors of Go's golang.org/x/mod/sumdb/note, note_test.go (TestNewVerifier,
// TestNewSigner, TestSign, TestOpen): data only.
constexpr char kPeterVerifier[] =
    "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
constexpr char kPeterSigner[] =
    "PRIVATE+KEY+PeterNeumann+c74f20a3+"
    "AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
constexpr char kEnochVerifier[] =
    "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop";
constexpr char kText[] =
    "If you think cryptography is the answer to your problem,\n"
    "then you don't know what your problem is.\n";
constexpr char kPeterSig[] =
    "\xE2\x80\x94 PeterNeumann "
    "x08go/ZJkuBS9UG/"
    "SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnA"
    "M=\n";
constexpr char kEnochSig[] =
    "\xE2\x80\x94 EnochRoot "
    "rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/"
    "5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n";

TEST(NoteTest, GoVerifierKeyAndItsManglings) {
  absl::StatusOr<NoteVerifier> verifier = ParseNoteVerifier(kPeterVerifier);
  ASSERT_TRUE(verifier.ok()) << verifier.status();
  EXPECT_EQ(verifier->name, "PeterNeumann");
  EXPECT_EQ(verifier->key_id, 0xc74f20a3u);
  EXPECT_EQ(FormatNoteVerifier(*verifier), kPeterVerifier);
  std::string key = kPeterVerifier;
  for (size_t i = 0; i <= key.size(); ++i) {
    for (size_t j = i + 1; j <= key.size(); ++j) {
      if (i == 0 && j == key.size()) continue;
      EXPECT_FALSE(ParseNoteVerifier(key.substr(i, j - i)).ok())
          << key.substr(i, j - i);
    }
  }
  for (size_t i = 0; i < key.size(); ++i) {
    std::string bad = key;
    ++bad[i];
    EXPECT_FALSE(ParseNoteVerifier(bad).ok()) << bad;
  }
  // Go's: a wrong length with an adjusted key id; an unknown type likewise.
  EXPECT_FALSE(ParseNoteVerifier("PeterNeumann+cc469956+"
                                 "ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/"
                                 "LDE4izWy10TWBADKEY==")
                   .ok());
  EXPECT_FALSE(ParseNoteVerifier("PeterNeumann+173116ae+"
                                 "ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW")
                   .ok());
}

TEST(NoteTest, GoSignerKeyAndItsManglings) {
  absl::StatusOr<NoteSigner> signer = ParseNoteSigner(kPeterSigner);
  ASSERT_TRUE(signer.ok()) << signer.status();
  EXPECT_EQ(FormatNoteSigner(*signer), kPeterSigner);
  EXPECT_EQ(FormatNoteVerifier(VerifierOf(*signer, kNoteEd25519)),
            kPeterVerifier);
  std::string key = kPeterSigner;
  for (size_t i = 0; i <= key.size(); ++i) {
    for (size_t j = i + 1; j <= key.size(); ++j) {
      if (i == 0 && j == key.size()) continue;
      EXPECT_FALSE(ParseNoteSigner(key.substr(i, j - i)).ok());
    }
  }
  for (size_t i = 0; i < key.size(); ++i) {
    std::string bad = key;
    ++bad[i];
    EXPECT_FALSE(ParseNoteSigner(bad).ok()) << bad;
  }
}

TEST(NoteTest, SignsExactlyAsGo) {
  absl::StatusOr<NoteSigner> signer = ParseNoteSigner(kPeterSigner);
  ASSERT_TRUE(signer.ok());
  absl::StatusOr<std::string> note = SignNote(kText, *signer);
  ASSERT_TRUE(note.ok());
  EXPECT_EQ(*note, absl::StrCat(kText, "\n", kPeterSig));
  EXPECT_FALSE(SignNote("abc", *signer).ok());  // no final newline
}

TEST(NoteTest, OpensAsGo) {
  NoteVerifier peter = *ParseNoteVerifier(kPeterVerifier);
  NoteVerifier enoch = *ParseNoteVerifier(kEnochVerifier);
  std::string both = absl::StrCat(kText, "\n", kPeterSig, kEnochSig);
  absl::StatusOr<Note> note = ParseNote(both);
  ASSERT_TRUE(note.ok()) << note.status();
  EXPECT_EQ(note->text, kText);
  ASSERT_EQ(note->signatures.size(), 2u);
  EXPECT_EQ(note->signatures[0].key_id, 0xc74f20a3u);
  EXPECT_EQ(note->signatures[1].key_id, 0xaf0cfe78u);
  EXPECT_TRUE(VerifyNoteSignature(*note, peter).ok());
  EXPECT_TRUE(VerifyNoteSignature(*note, enoch).ok());

  // A signature of a known key that does not verify (Go inserts "ABCD").
  std::string sig = kPeterSig;
  std::string broken =
      absl::StrCat(kText, "\n", sig.substr(0, 60), "ABCD", sig.substr(60));
  absl::StatusOr<Note> tampered = ParseNote(broken);
  ASSERT_TRUE(tampered.ok());
  EXPECT_TRUE(absl::IsPermissionDenied(VerifyNoteSignature(*tampered, peter)));
  // Only Enoch signed: Peter's key finds nothing.
  absl::StatusOr<Note> only_enoch =
      ParseNote(absl::StrCat(kText, "\n", kEnochSig));
  ASSERT_TRUE(only_enoch.ok());
  EXPECT_TRUE(absl::IsNotFound(VerifyNoteSignature(*only_enoch, peter)));
  // The text changed by one character (control: the same note verifies).
  std::string other = both;
  other[3] = 'X';
  EXPECT_TRUE(
      absl::IsPermissionDenied(VerifyNoteSignature(*ParseNote(other), peter)));

  std::string many = absl::StrCat(kText, "\n");
  for (int i = 0; i < 101; ++i) many += kPeterSig;
  EXPECT_FALSE(ParseNote(many).ok());
  // Go's malformed messages.
  const std::string peter_sig = kPeterSig;
  const std::string bad[] = {
      kText,
      absl::StrCat(kText, "\n"),
      absl::StrCat(kText, "\n", peter_sig.substr(0, peter_sig.size() - 1)),
      absl::StrCat("\x01", kText, "\n", peter_sig),
      absl::StrCat("\xff", kText, "\n", peter_sig),
      absl::StrCat(kText, "\n",
                   "\xE2\x80\x94 Bad Name "
                   "x08go/ZJkuBS9UG/"
                   "SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotp"
                   "RZb6KE6RyyBwJnAM="),
      absl::StrCat(kText, "\n", peter_sig, "Unexpected line.\n"),
  };
  for (const std::string& message : bad) {
    EXPECT_FALSE(ParseNote(message).ok()) << message;
  }
}

// The example of c2sp.org/signed-note parses, its key id read big-endian
// from the first four bytes of the signature.
TEST(NoteTest, C2spExampleParses) {
  const std::string example =
      "Ognuno sta solo sul cuor della terra\n"
      "trafitto da un raggio di sole:\n"
      "\n"
      "ed \xC3\xA8 subito sera.\n"
      "\n"
      "\xE2\x80\x94 quasimodo.example/salvatore "
      "NnugSzTjtVAewIS+Z/iJhUPeFDkO/"
      "5QQ2i5ddnGITLlC+EhfLW9oJKONrMouFSQU0xMcXxj99ihAQwaqP3ZekRwNtIc=\n";
  absl::StatusOr<Note> note = ParseNote(example);
  ASSERT_TRUE(note.ok()) << note.status();
  EXPECT_EQ(note->text,
            "Ognuno sta solo sul cuor della terra\ntrafitto da un raggio di "
            "sole:\n\ned \xC3\xA8 subito sera.\n");
  ASSERT_EQ(note->signatures.size(), 1u);
  EXPECT_EQ(note->signatures[0].name, "quasimodo.example/salvatore");
  EXPECT_EQ(note->signatures[0].key_id, 0x367ba04bu);
  EXPECT_EQ(note->signatures[0].signature.size(), 64u);
}

// The checkpoint example of c2sp.org/tlog-checkpoint and the request body
// example of c2sp.org/tlog-witness.
TEST(NoteTest, C2spCheckpointExample) {
  const std::string example =
      "example.com/behind-the-sofa\n20852163\n"
      "CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n"
      "\xE2\x80\x94 example.com/behind-the-sofa "
      "Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/"
      "Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n"
      "\xE2\x80\x94 witness.example.com/w1 "
      "jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/"
      "zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==\n";
  absl::StatusOr<Note> note = ParseNote(example);
  ASSERT_TRUE(note.ok()) << note.status();
  absl::StatusOr<Checkpoint> checkpoint = ParseCheckpoint(note->text);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  EXPECT_EQ(checkpoint->origin, "example.com/behind-the-sofa");
  EXPECT_EQ(checkpoint->size, 20852163u);
  EXPECT_EQ(FormatCheckpoint(*checkpoint), note->text);
  // The witness's cosignature: key id, then an 8-byte timestamp and 64
  // bytes of signature.
  ASSERT_EQ(note->signatures.size(), 2u);
  EXPECT_EQ(note->signatures[1].signature.size(), 72u);
  for (const char* bad :
       {"o\n012\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n",
        "o\n12\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I\n", "o\n12\n",
        "\n12\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n",
        "o\n-1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"}) {
    EXPECT_FALSE(ParseCheckpoint(bad).ok()) << bad;
  }
}

TEST(NoteTest, CosignatureRoundTripAndKeyIdWithTypeFour) {
  NoteSigner witness = *GenerateNoteSigner("witness.example/w1");
  NoteVerifier as_cosigner = VerifierOf(witness, kNoteCosignatureV1);
  NoteVerifier as_signer = VerifierOf(witness, kNoteEd25519);
  EXPECT_NE(as_cosigner.key_id, as_signer.key_id);
  EXPECT_EQ(as_cosigner.key_id,
            NoteKeyId("witness.example/w1", 0x04, witness.key.public_key()));
  std::string body =
      "example.com/log\n5\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n";
  absl::StatusOr<std::string> line = CosignNoteLine(body, witness, 1679315147);
  ASSERT_TRUE(line.ok());
  absl::StatusOr<Note> note = ParseNote(absl::StrCat(body, "\n", *line));
  ASSERT_TRUE(note.ok());
  absl::StatusOr<uint64_t> time = VerifyCosignature(*note, as_cosigner);
  ASSERT_TRUE(time.ok()) << time.status();
  EXPECT_EQ(*time, 1679315147u);
  // Round trip of the verifier key with type 0x04.
  EXPECT_EQ(
      FormatNoteVerifier(*ParseNoteVerifier(FormatNoteVerifier(as_cosigner))),
      FormatNoteVerifier(as_cosigner));
  // The same line over another body does not verify.
  absl::StatusOr<Note> moved = ParseNote(absl::StrCat(
      "example.com/log\n6\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n",
      *line));
  ASSERT_TRUE(moved.ok());
  EXPECT_TRUE(absl::IsPermissionDenied(
      VerifyCosignature(*moved, as_cosigner).status()));
  // A plain note signature is not a cosignature (other key id): not found.
  absl::StatusOr<std::string> signed_note = SignNote(body, witness);
  EXPECT_TRUE(absl::IsNotFound(
      VerifyCosignature(*ParseNote(*signed_note), as_cosigner).status()));
}

TEST(NoteTest, Base64IsStrict) {
  EXPECT_EQ(*Base64Decode("AAE="), std::string("\0\1", 2));
  EXPECT_FALSE(Base64Decode("AAE").ok());
  EXPECT_FALSE(Base64Decode("AAF=").ok());  // stray bits
  EXPECT_FALSE(Base64Decode("AA E=").ok());
  EXPECT_FALSE(Base64Decode("").ok());
}

}  // namespace
}  // namespace garuda
