// The project's Merkle tree and its signed checkpoints, with the real
// programs (docs/audit.md, "The tree"): commands, proofs checked by an
// independent verifier, and the attacks with their negative controls.
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "lib/audit/tree_store.h"
#include "lib/crypto/merkle.h"
#include "lib/crypto/note.h"
#include "tests/audit/audit_fixture.h"

namespace garuda {
namespace testing_audit {
namespace {

class TlogTest : public AuditProgramsTest {
 protected:
  void SetUp() override {
    AuditProgramsTest::SetUp();
    key_file_ = JoinPath(base_, "signing.key");
    RunResult made = Shell(absl::StrCat(
        Quote(Audit()), " key generate --name example.com/garuda --out ",
        Quote(key_file_)));
    ASSERT_EQ(made.exit_code, 0) << made.err;
    std::vector<std::string> lines =
        absl::StrSplit(made.out, '\n', absl::SkipEmpty());
    vkey_ = lines.back();
    Policy(absl::StrCat("{\"checkpoint\": true, \"signingKey\": \"", key_file_,
                        "\"}"));
  }
  RunResult Tool(const std::string& args) {
    return Shell(absl::StrCat(Quote(Audit()), " ", args, " --project ",
                              Quote(project_)));
  }
  std::string Tree() { return JoinPath(Folder(), "tree"); }
  Checkpoint SignedCheckpoint() {
    absl::StatusOr<Note> note =
        ParseNote(ReadFile(JoinPath(Tree(), "checkpoint")));
    EXPECT_TRUE(note.ok()) << note.status();
    absl::StatusOr<NoteVerifier> key = ParseNoteVerifier(vkey_);
    EXPECT_TRUE(key.ok());
    EXPECT_TRUE(VerifyNoteSignature(*note, *key).ok());
    return *ParseCheckpoint(note->text);
  }
  std::vector<MerkleHash> ProofLines(const std::string& text) {
    std::vector<MerkleHash> proof;
    for (absl::string_view line :
         absl::StrSplit(text, '\n', absl::SkipEmpty())) {
      proof.push_back(*HashFromBytes(*Base64Decode(line)));
    }
    return proof;
  }
  std::string LogName(const std::string& path) {
    std::string name = Basename(path);
    return name.substr(0, name.size() - 6);
  }

  std::string key_file_, vkey_;
};

TEST_F(TlogTest, KeyGenerateWritesGoNoteKeyFormatAndRefusesToOverwrite) {
  EXPECT_EQ(vkey_.rfind("example.com/garuda+", 0), 0u) << vkey_;
  absl::StatusOr<NoteVerifier> key = ParseNoteVerifier(vkey_);
  ASSERT_TRUE(key.ok()) << key.status();
  EXPECT_EQ(key->type, kNoteEd25519);
  struct stat st;
  ASSERT_EQ(::stat(key_file_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  absl::StatusOr<NoteSigner> signer =
      ParseNoteSigner(absl::StripTrailingAsciiWhitespace(ReadFile(key_file_)));
  ASSERT_TRUE(signer.ok());
  EXPECT_EQ(FormatNoteVerifier(VerifierOf(*signer, kNoteEd25519)), vkey_);
  std::string before = ReadFile(key_file_);
  RunResult again = Shell(absl::StrCat(
      Quote(Audit()), " key generate --name other --out ", Quote(key_file_)));
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_THAT(again.err, HasSubstr("never overwritten"));
  EXPECT_EQ(ReadFile(key_file_), before);
}

// Two sessions, then every command; the leaves hashed and the proofs
// checked here by lib/crypto's verifier against the signed root, and the
// leaves against the log lines byte for byte.
TEST_F(TlogTest, CheckpointLeavesAndProofsAgree) {
  ASSERT_EQ(Append(Events(1, 5)).exit_code, 0);
  ASSERT_EQ(Append(Events(6, 4)).exit_code, 0);
  Checkpoint checkpoint = SignedCheckpoint();
  // 5 + session_end, 4 + session_end.
  EXPECT_EQ(checkpoint.size, 11u);
  EXPECT_EQ(checkpoint.origin,
            absl::StrCat("example.com/garuda/", Basename(Folder())));
  RunResult printed = Tool("checkpoint");
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  EXPECT_EQ(printed.out, ReadFile(JoinPath(Tree(), "checkpoint")));

  RunResult leaves = Tool("leaves");
  ASSERT_EQ(leaves.exit_code, 0) << leaves.err;
  std::vector<std::string> lines =
      absl::StrSplit(leaves.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 11u);
  std::vector<std::string> logs = Logs();
  std::sort(logs.begin(), logs.end());
  EXPECT_EQ(leaves.out, ReadFile(logs[0]) + ReadFile(logs[1]));
  MemoryMerkleTree mine;
  for (const std::string& line : lines) mine.AppendLeaf(line);
  EXPECT_EQ(*TreeRoot(11, mine.Reader()), checkpoint.root);
  EXPECT_EQ(Tool("leaves --size 3").out,
            absl::StrCat(lines[0], "\n", lines[1], "\n", lines[2], "\n"));

  for (uint64_t index : {0, 4, 10}) {
    RunResult proof =
        Tool(absl::StrCat("prove inclusion --index ", index, " --size 11"));
    ASSERT_EQ(proof.exit_code, 0) << proof.err;
    EXPECT_TRUE(VerifyInclusion(index, 11, MerkleLeafHash(lines[index]),
                                ProofLines(proof.out), checkpoint.root)
                    .ok());
    // A wrong proof: the proof of another leaf, and one for a stale size.
    EXPECT_FALSE(VerifyInclusion(index, 11,
                                 MerkleLeafHash(lines[(index + 1) % 11]),
                                 ProofLines(proof.out), checkpoint.root)
                     .ok());
    RunResult stale =
        Tool(absl::StrCat("prove inclusion --index ", index, " --size 10"));
    if (index < 10) {
      EXPECT_FALSE(VerifyInclusion(index, 11, MerkleLeafHash(lines[index]),
                                   ProofLines(stale.out), checkpoint.root)
                       .ok());
    }
  }
  RunResult consistency = Tool("prove consistency --old 6 --size 11");
  ASSERT_EQ(consistency.exit_code, 0) << consistency.err;
  EXPECT_TRUE(VerifyConsistency(6, 11, ProofLines(consistency.out),
                                *TreeRoot(6, mine.Reader()), checkpoint.root)
                  .ok());
  // A stale proof (from 5) does not prove 6.
  RunResult stale = Tool("prove consistency --old 5 --size 11");
  EXPECT_FALSE(VerifyConsistency(6, 11, ProofLines(stale.out),
                                 *TreeRoot(6, mine.Reader()), checkpoint.root)
                   .ok());
  EXPECT_EQ(Tool("prove inclusion --index 0 --size 12").exit_code, 2);

  RunResult verified = Verify(absl::StrCat("--log-key ", Quote(vkey_)));
  EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
  EXPECT_THAT(verified.out, HasSubstr("(tree): ok: 11 lines in the tree"));
}

// The independent check: python3's hashlib and the cryptography package
// (OpenSSL through another binding) verify the checkpoint's signature and
// recompute the root from the leaves as RFC 6962 says.
TEST_F(TlogTest, AnIndependentVerifierAgrees) {
  ASSERT_EQ(Append(Events(1, 6)).exit_code, 0);
  RunResult has = Shell("python3 -c 'import cryptography'");
  if (has.exit_code != 0) GTEST_SKIP() << "python3 cryptography is missing";
  WriteFile(JoinPath(base_, "check.py"), R"(
import base64, hashlib, subprocess, sys
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
audit, project, vkey = sys.argv[1:4]
run = lambda *a: subprocess.run([audit, *a, '--project', project], check=True, capture_output=True).stdout
note = run('checkpoint').decode()
text, sigs = note.rsplit('\n\n', 1)
text += '\n'
name, keyid, key = vkey.split('+', 2)
raw = base64.b64decode(key)
assert raw[0] == 1
ok = False
for line in sigs.splitlines():
    dash, signer, sig = line.split(' ')
    assert dash == '\u2014'
    sig = base64.b64decode(sig)
    if signer == name and sig[:4].hex() == keyid:
        Ed25519PublicKey.from_public_bytes(raw[1:]).verify(sig[4:], text.encode())
        ok = True
assert ok, 'no signature by the key'
origin, size, root = text.splitlines()[:3]
leaves = run('leaves', '--size', size).split(b'\n')[:-1]
def mth(d):
    if len(d) == 1: return hashlib.sha256(b'\0' + d[0]).digest()
    k = 1
    while k * 2 < len(d): k *= 2
    return hashlib.sha256(b'\1' + mth(d[:k]) + mth(d[k:])).digest()
assert base64.b64encode(mth(leaves)).decode() == root, 'root differs'
print('independent ok', size)
)");
  RunResult checked = Shell(
      absl::StrCat("python3 ", Quote(JoinPath(base_, "check.py")), " ",
                   Quote(Audit()), " ", Quote(project_), " ", Quote(vkey_)));
  EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err;
  EXPECT_THAT(checked.out, HasSubstr("independent ok 7"));
}

TEST_F(TlogTest, ATamperedLineIsATreeMismatch) {
  ASSERT_EQ(Append(Events(1, 3)).exit_code, 0);
  RunResult clean = Verify();
  ASSERT_EQ(clean.exit_code, 0) << clean.out;  // control
  std::string log = Logs()[0];
  std::string content = ReadFile(log);
  content.replace(content.find("build2"), 6, "build7");
  WriteFile(log, content);
  RunResult run = Verify();
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.out, HasSubstr("(tree): tree_mismatch: leaf 1"));
  EXPECT_THAT(run.out, HasSubstr("the line was changed after it was written"));
}

// Someone with the person's rights rewrites a line, recomputes the chain,
// and rebuilds the tree (here with the auditor's own recovery), but cannot
// sign: the old signed checkpoint no longer matches. Control: the chain
// alone finds nothing.
TEST_F(TlogTest, ARewrittenHistoryNoLongerMatchesTheSignedCheckpoint) {
  ASSERT_EQ(Append(Events(1, 3)).exit_code, 0);
  const std::string signed_before = ReadFile(JoinPath(Tree(), "checkpoint"));
  std::string log = Logs()[0];
  RewriteAndRechain(log, LogName(log), "build2", "build9");
  // The log's own checkpoint rewritten to the new head as well.
  std::string content = ReadFile(log);
  std::string last_hash = content.substr(content.rfind(",\"hash\":\"") + 9, 64);
  WriteFile(CheckpointOf(log),
            absl::StrCat("{\"log\":\"", LogName(log),
                         "\",\"seq\":4,\"hash\":\"", last_hash, "\"}\n"));
  for (const char* file : {"entries", "logs", "checkpoint"}) {
    ASSERT_EQ(::unlink(JoinPath(Tree(), file).c_str()), 0);
  }
  // The auditor rebuilds the tree from the rewritten log and, with no
  // checkpoint left to compare, signs it: without a witness nobody can
  // tell (the negative control of the witness tests).
  ASSERT_EQ(Append("").exit_code, 0);
  RunResult rebuilt = Verify();
  EXPECT_EQ(rebuilt.exit_code, 0) << rebuilt.out;
  // The old signed checkpoint put back (it was copied elsewhere, or the
  // rewrite left it): found.
  WriteFile(JoinPath(Tree(), "checkpoint"), signed_before);
  RunResult run = Verify();
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_THAT(run.out,
              HasSubstr("(tree): rewritten: the signed checkpoint says "
                        "the first 4 lines have the root"));
  // Each log's own chain still says ok: only the tree saw it.
  EXPECT_THAT(run.out, HasSubstr(absl::StrCat(LogName(log), ": ok")));
  // And the auditor refuses to sign over it.
  RunResult refused = Append(Events(10, 1));
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.err,
              HasSubstr("the logs were rewritten; nothing more is signed"));
}

// Control of the refusal above: the tree removed but the lines untouched,
// the auditor rebuilds it and signs a checkpoint that extends the old one.
TEST_F(TlogTest, ARebuiltTreeOfUntouchedLinesIsSignedAgain) {
  ASSERT_EQ(Append(Events(1, 3)).exit_code, 0);
  for (const char* file : {"entries", "logs"}) {
    ASSERT_EQ(::unlink(JoinPath(Tree(), file).c_str()), 0);
  }
  RunResult appended = Append(Events(4, 2));
  ASSERT_EQ(appended.exit_code, 0) << appended.err;
  EXPECT_EQ(SignedCheckpoint().size, 7u);
  EXPECT_EQ(Verify().exit_code, 0);
}

TEST_F(TlogTest, AForgedOrForeignCheckpointIsABadSignature) {
  ASSERT_EQ(Append(Events(1, 2)).exit_code, 0);
  std::string note = ReadFile(JoinPath(Tree(), "checkpoint"));
  // Another size under the same signature.
  std::string forged = note;
  forged.replace(forged.find("\n3\n"), 3, "\n2\n");
  WriteFile(JoinPath(Tree(), "checkpoint"), forged);
  RunResult run = Verify();
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.out, HasSubstr("(tree): bad_signature"));
  // With a key the person keeps elsewhere, a checkpoint re-signed with
  // another key (and tree/key replaced to match) is refused too.
  WriteFile(JoinPath(Tree(), "checkpoint"), note);
  NoteSigner other = *GenerateNoteSigner("example.com/garuda");
  Note parsed = *ParseNote(note);
  WriteFile(JoinPath(Tree(), "checkpoint"), *SignNote(parsed.text, other));
  WriteFile(JoinPath(Tree(), "key"),
            FormatNoteVerifier(VerifierOf(other, kNoteEd25519)) + "\n");
  EXPECT_EQ(Verify().exit_code, 0);  // control: tree/key is whatever is there
  run = Verify(absl::StrCat("--log-key ", Quote(vkey_)));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.out, HasSubstr("no signature by example.com/garuda+"));
}

TEST_F(TlogTest, ParallelSessionsShareOneTree) {
  std::unique_ptr<ipc::HelperProcess> a = Serve();
  std::unique_ptr<ipc::HelperProcess> b = Serve();
  ASSERT_TRUE(a && b);
  // Each channel counts its own requests.
  uint64_t seq_a = 0, seq_b = 0;
  for (int i = 0; i < 5; ++i) {
    seq_ = seq_a;
    ASSERT_TRUE(AppendOverChannel(*a, i * 10, 3, false).ok());
    seq_a = seq_;
    seq_ = seq_b;
    ASSERT_TRUE(AppendOverChannel(*b, i * 10 + 5, 2, i % 2 == 0).ok());
    seq_b = seq_;
  }
  seq_ = seq_a;
  ASSERT_TRUE(CloseOverChannel(*a).ok());
  seq_ = seq_b;
  ASSERT_TRUE(CloseOverChannel(*b).ok());
  EXPECT_EQ(SignedCheckpoint().size, 27u);  // 25 and two session_end
  RunResult run = Verify();
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("(tree): ok: 27 lines in the tree"));
}

// A session whose lines wait for their group (a long fsyncMaxMs) while
// another auditor of the project opens the tree: that auditor leaves the
// live log to its writer, so no line enters the tree twice. (The control,
// a log nobody holds is taken up, is the test after this one.)
TEST_F(TlogTest, ALiveSessionsPendingLinesAreNotTakenUpTwice) {
  Policy(absl::StrCat("{\"checkpoint\": true, \"fsyncMaxMs\": 600000, ",
                      "\"signingKey\": \"", key_file_, "\"}"));
  std::unique_ptr<ipc::HelperProcess> live = Serve();
  ASSERT_TRUE(live);
  ASSERT_TRUE(AppendOverChannel(*live, 1, 3, /*durable=*/false).ok());
  ASSERT_EQ(Append(Events(10, 2)).exit_code, 0);
  ASSERT_TRUE(CloseOverChannel(*live).ok());
  RunResult run = Verify();
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("(tree): ok: 7 lines in the tree"));
  EXPECT_EQ(SignedCheckpoint().size, 7u);
}

// An auditor killed between its log and the tree: the next auditor takes
// the missing lines from the log. Simulated by cutting the tree's files
// back, as a kill between the two writes leaves them.
TEST_F(TlogTest, LinesMissingFromTheTreeAreTakenUpAtTheNextOpen) {
  ASSERT_EQ(Append(Events(1, 3)).exit_code, 0);
  ASSERT_EQ(
      ::truncate(JoinPath(Tree(), "entries").c_str(), TreeEntryOffset(2) + 5),
      0);
  ASSERT_EQ(::unlink(JoinPath(Tree(), "checkpoint").c_str()), 0);
  ASSERT_EQ(Append(Events(4, 1)).exit_code, 0);
  EXPECT_EQ(SignedCheckpoint().size, 6u);
  RunResult run = Verify();
  EXPECT_EQ(run.exit_code, 0) << run.out;
  RunResult leaves = Tool("leaves");
  std::vector<std::string> logs = Logs();
  std::sort(logs.begin(), logs.end());
  EXPECT_EQ(leaves.out, ReadFile(logs[0]) + ReadFile(logs[1]));
}

TEST_F(TlogTest, WithoutASigningKeyThereIsNoTree) {
  Policy("{\"checkpoint\": true}");
  ASSERT_EQ(Append(Events(1, 2)).exit_code, 0);
  struct stat st;
  EXPECT_NE(::stat(Tree().c_str(), &st), 0);
  EXPECT_EQ(Tool("checkpoint").exit_code, 2);
  RunResult run = Verify(absl::StrCat("--log-key ", Quote(vkey_)));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.out, HasSubstr("(tree): deleted"));
}

// A witness outside the person's reach: it cosigns the checkpoint, refuses
// the rewritten history (which verify alone accepts: the negative
// control), and its cosignature kept beside the tree shows the rewrite to
// verify --witness-key.
TEST_F(TlogTest, AWitnessCatchesARewriteThatVerifyAloneCannot) {
  const std::string witness_key = JoinPath(base_, "witness.key");
  const std::string port_file = JoinPath(base_, "port");
  ASSERT_EQ(Shell(absl::StrCat(Quote(Audit()),
                               " key generate --name witness.example/w1 --out ",
                               Quote(witness_key)))
                .exit_code,
            0);
  RunResult started = Shell(absl::StrCat(
      Quote(Audit()), " witness serve --listen 127.0.0.1:0 --port-file ",
      Quote(port_file), " --key ", Quote(witness_key), " --state ",
      Quote(JoinPath(base_, "state")), " --log ", Quote(vkey_), " 2>",
      Quote(JoinPath(base_, "serve.err")), " </dev/null >/dev/null & echo $!"));
  const std::string pid = std::string(absl::StripAsciiWhitespace(started.out));
  absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (ReadFile(port_file).empty() && absl::Now() < deadline)
    absl::SleepFor(absl::Milliseconds(20));
  std::string port =
      std::string(absl::StripAsciiWhitespace(ReadFile(port_file)));
  ASSERT_FALSE(port.empty()) << ReadFile(JoinPath(base_, "serve.err"));
  // The announcement comes after the lockdown; wait for it, then look.
  while (ReadFile(JoinPath(base_, "serve.err")).find("cosigner key") ==
             std::string::npos &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  std::string serve_err = ReadFile(JoinPath(base_, "serve.err"));
  std::string cosigner = serve_err.substr(serve_err.find("cosigner key ") + 13);
  cosigner = std::string(absl::StripAsciiWhitespace(cosigner));
  EXPECT_EQ(ProcStatus(pid, "NoNewPrivs"), "1");
  EXPECT_EQ(ProcStatus(pid, "Seccomp"), "2");
  const std::string url = absl::StrCat("http://127.0.0.1:", port);

  ASSERT_EQ(Append(Events(1, 3)).exit_code, 0);
  RunResult submitted = Tool(absl::StrCat("witness submit --url ", url));
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  EXPECT_THAT(
      submitted.out,
      HasSubstr("cosigned at size 4 by:\n\xE2\x80\x94 witness.example/w1 "));
  ASSERT_EQ(Append(Events(4, 2)).exit_code, 0);
  submitted = Tool(absl::StrCat("witness submit --url ", url));
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  RunResult verified = Verify(absl::StrCat("--witness-key ", Quote(cosigner)));
  EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
  EXPECT_THAT(verified.out, HasSubstr("1 cosigned checkpoint(s) agree"));

  // The rewrite: a line changed, the chain and the log's checkpoint
  // recomputed, the tree rebuilt and re-signed by the auditor itself.
  std::vector<std::string> logs = Logs();
  std::sort(logs.begin(), logs.end());
  const std::string log = logs[0];
  const std::string cosigned = ReadFile(WitnessCheckpointPath(Tree(), url));
  RewriteAndRechain(log, LogName(log), "build2", "build9");
  std::string content = ReadFile(log);
  WriteFile(
      CheckpointOf(log),
      absl::StrCat("{\"log\":\"", LogName(log), "\",\"seq\":4,\"hash\":\"",
                   content.substr(content.rfind(",\"hash\":\"") + 9, 64),
                   "\"}\n"));
  for (const char* file : {"entries", "logs", "checkpoint"}) {
    ASSERT_EQ(::unlink(JoinPath(Tree(), file).c_str()), 0);
  }
  ASSERT_EQ(::unlink(WitnessCheckpointPath(Tree(), url).c_str()), 0);
  ASSERT_EQ(Append("").exit_code, 0);
  // Negative control: without the witness nothing shows.
  RunResult alone = Verify(absl::StrCat("--log-key ", Quote(vkey_)));
  EXPECT_EQ(alone.exit_code, 0) << alone.out;
  // The witness refuses it: the tree does not extend what it cosigned.
  RunResult refused = Tool(absl::StrCat("witness submit --url ", url));
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("the history was rewritten"));
  // With the cosigned checkpoint still beside the tree, verify sees it.
  WriteFile(WitnessCheckpointPath(Tree(), url), cosigned);
  RunResult found = Verify(absl::StrCat("--witness-key ", Quote(cosigner)));
  EXPECT_EQ(found.exit_code, 1) << found.out;
  EXPECT_THAT(
      found.out,
      HasSubstr(
          "rewritten: the checkpoint witness witness.example/w1 cosigned"));
  // And without it, --witness-key says nothing was cosigned.
  ASSERT_EQ(::unlink(WitnessCheckpointPath(Tree(), url).c_str()), 0);
  found = Verify(absl::StrCat("--witness-key ", Quote(cosigner)));
  EXPECT_EQ(found.exit_code, 1);
  EXPECT_THAT(found.out, HasSubstr("not_witnessed"));
  ::kill(std::stoi(pid), SIGTERM);
}

}  // namespace
}  // namespace testing_audit
}  // namespace garuda
