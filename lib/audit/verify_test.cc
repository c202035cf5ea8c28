#include "lib/audit/verify.h"

#include "gtest/gtest.h"
#include "lib/audit/test_util.h"

namespace garuda {
namespace {

audit::AuditCheckpoint Checkpoint(const std::string& log, uint64_t seq,
                                  const std::string& hash) {
  audit::AuditCheckpoint checkpoint;
  checkpoint.set_log(log);
  checkpoint.set_seq(seq);
  checkpoint.set_hash(hash);
  return checkpoint;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line;
  return out;
}

TEST(VerifyTest, GoodLogIsOk) {
  std::vector<std::string> hashes;
  std::string log = TestLog("a", 5, &hashes);
  audit::LogReport report = VerifyLogContent(log, "a", nullptr, nullptr);
  EXPECT_EQ(report.status(), kStatusOk) << report.message();
  EXPECT_EQ(report.lines(), 5u);
  audit::AuditCheckpoint checkpoint = Checkpoint("a", 5, hashes[4]);
  EXPECT_EQ(VerifyLogContent(log, "a", &checkpoint, nullptr).status(),
            kStatusOk);
  EXPECT_EQ(VerifyLogContent("", "a", nullptr, nullptr).status(), kStatusOk);
}

// Every single-byte change of a small log, one at a time, to every other
// byte value, is detected (as systemd's journal verify test does).
TEST(VerifyTest, EverySingleByteChangeIsDetected) {
  std::vector<std::string> hashes;
  const std::string log = TestLog("small", 2, &hashes);
  audit::AuditCheckpoint checkpoint = Checkpoint("small", 2, hashes[1]);
  // Negative control: the unchanged log passes, with and without checkpoint.
  ASSERT_EQ(VerifyLogContent(log, "small", &checkpoint, nullptr).status(),
            kStatusOk);
  ASSERT_EQ(VerifyLogContent(log, "small", nullptr, nullptr).status(),
            kStatusOk);
  int changes = 0;
  for (size_t i = 0; i < log.size(); ++i) {
    for (int value = 0; value < 256; ++value) {
      if (static_cast<char>(value) == log[i]) continue;
      std::string changed = log;
      changed[i] = static_cast<char>(value);
      ++changes;
      audit::LogReport with =
          VerifyLogContent(changed, "small", &checkpoint, nullptr);
      ASSERT_TRUE(IsFailure(with))
          << "byte " << i << " -> " << value << ": " << with.status();
      audit::LogReport without =
          VerifyLogContent(changed, "small", nullptr, nullptr);
      // Without a checkpoint only the last newline may read as a torn tail.
      if (i == log.size() - 1) {
        ASSERT_NE(without.status(), kStatusOk);
      } else {
        ASSERT_TRUE(IsFailure(without))
            << "byte " << i << " -> " << value << ": " << without.status();
      }
    }
  }
  EXPECT_EQ(changes, static_cast<int>(log.size()) * 255);
}

TEST(VerifyTest, InsertRemoveReorderSplice) {
  std::vector<std::string> lines = SplitLines(TestLog("a", 6));
  std::vector<std::string> other = SplitLines(TestLog("b", 6));

  std::vector<std::string> inserted = lines;
  inserted.insert(inserted.begin() + 3, lines[1]);
  audit::LogReport report =
      VerifyLogContent(Join(inserted), "a", nullptr, nullptr);
  EXPECT_EQ(report.status(), kStatusChainBroken);
  EXPECT_EQ(report.line(), 4u);

  std::vector<std::string> removed = lines;
  removed.erase(removed.begin() + 2);
  report = VerifyLogContent(Join(removed), "a", nullptr, nullptr);
  EXPECT_EQ(report.status(), kStatusChainBroken);
  EXPECT_NE(report.message().find("seq 3 to 3 are missing"), std::string::npos)
      << report.message();

  std::vector<std::string> reordered = lines;
  std::swap(reordered[2], reordered[3]);
  EXPECT_EQ(VerifyLogContent(Join(reordered), "a", nullptr, nullptr).status(),
            kStatusChainBroken);

  // Lines 1-3 of a, 4-6 of b: every line is intact, the seqs continue.
  std::vector<std::string> spliced(lines.begin(), lines.begin() + 3);
  spliced.insert(spliced.end(), other.begin() + 3, other.end());
  report = VerifyLogContent(Join(spliced), "a", nullptr, nullptr);
  EXPECT_EQ(report.status(), kStatusChainBroken);
  EXPECT_EQ(report.seq(), 4u);

  // All of b put in a's place.
  EXPECT_EQ(VerifyLogContent(Join(other), "a", nullptr, nullptr).status(),
            kStatusChainBroken);
  // Negative control: the same lines in their own log pass.
  EXPECT_EQ(VerifyLogContent(Join(other), "b", nullptr, nullptr).status(),
            kStatusOk);
}

TEST(VerifyTest, CutLastLineNeedsTheCheckpoint) {
  std::vector<std::string> hashes;
  std::vector<std::string> lines = SplitLines(TestLog("a", 5, &hashes));
  lines.pop_back();
  std::string cut = Join(lines);
  // Without the checkpoint a cut is invisible (the spec's negative control).
  EXPECT_EQ(VerifyLogContent(cut, "a", nullptr, nullptr).status(), kStatusOk);
  audit::AuditCheckpoint checkpoint = Checkpoint("a", 5, hashes[4]);
  audit::LogReport report = VerifyLogContent(cut, "a", &checkpoint, nullptr);
  EXPECT_EQ(report.status(), kStatusCut);
  EXPECT_EQ(
      report.message(),
      "1 line cut back from the checkpoint at seq 5: the log ends at seq 4");
}

TEST(VerifyTest, TornTailIsNotTampering) {
  std::vector<std::string> hashes;
  std::string log = TestLog("a", 3, &hashes);
  std::string torn = log.substr(0, log.size() - 40);
  audit::LogReport report = VerifyLogContent(torn, "a", nullptr, nullptr);
  EXPECT_EQ(report.status(), kStatusTornTail);
  EXPECT_FALSE(IsFailure(report));
  EXPECT_EQ(report.lines(), 2u);
  // The auditor checkpoints only what is on disk: a torn line after the
  // checkpoint is a crash ...
  audit::AuditCheckpoint at_two = Checkpoint("a", 2, hashes[1]);
  EXPECT_EQ(VerifyLogContent(torn, "a", &at_two, nullptr).status(),
            kStatusTornTail);
  // ... but a checkpointed line that is torn was cut.
  audit::AuditCheckpoint at_three = Checkpoint("a", 3, hashes[2]);
  EXPECT_EQ(VerifyLogContent(torn, "a", &at_three, nullptr).status(),
            kStatusCut);
}

TEST(VerifyTest, OlderCheckpointPutBack) {
  std::vector<std::string> hashes;
  std::string log = TestLog("a", 5, &hashes);
  audit::AuditCheckpoint older = Checkpoint("a", 3, hashes[2]);
  // An open log may run ahead of its checkpoint (an unsynced group when the
  // auditor died): not a failure ...
  audit::LogReport report = VerifyLogContent(log, "a", &older, nullptr);
  EXPECT_EQ(report.status(), kStatusOk);
  EXPECT_NE(report.message().find("2 lines after the checkpoint at seq 3"),
            std::string::npos)
      << report.message();
  // ... but the auditor checkpoints a closed log at its session_end line.
  audit::AuditEvent end;
  end.set_kind(kSessionEndKind);
  std::string closed = log;
  AppendAuditLine(6, absl::UnixEpoch(), hashes[4], end, &closed);
  EXPECT_EQ(VerifyLogContent(closed, "a", &older, nullptr).status(),
            kStatusCheckpointBehind);
  audit::AuditCheckpoint wrong = Checkpoint("a", 5, hashes[3]);
  EXPECT_EQ(VerifyLogContent(log, "a", &wrong, nullptr).status(),
            kStatusCheckpointMismatch);
}

TEST(VerifyTest, RollbackWithCheckpointNeedsTheWitness) {
  std::vector<std::string> hashes;
  std::vector<std::string> lines = SplitLines(TestLog("a", 6, &hashes));
  std::string rolled_back = Join({lines[0], lines[1], lines[2]});
  audit::AuditCheckpoint checkpoint = Checkpoint("a", 3, hashes[2]);
  // Log and checkpoint rolled back together: consistent, so not detected.
  EXPECT_EQ(VerifyLogContent(rolled_back, "a", &checkpoint, nullptr).status(),
            kStatusOk);
  std::map<uint64_t, std::string> witnessed = {{2, hashes[1]}, {5, hashes[4]}};
  audit::LogReport report =
      VerifyLogContent(rolled_back, "a", &checkpoint, &witnessed);
  EXPECT_EQ(report.status(), kStatusWitnessMismatch);
  EXPECT_NE(report.message().find("rolled back"), std::string::npos);
  // Negative control: the full log agrees with the witness.
  audit::AuditCheckpoint full = Checkpoint("a", 6, hashes[5]);
  EXPECT_EQ(VerifyLogContent(Join(lines), "a", &full, &witnessed).status(),
            kStatusOk);
}

TEST(VerifyTest, RewrittenChainNeedsTheWitness) {
  std::vector<std::string> hashes;
  TestLog("a", 4, &hashes);
  // A whole new chain under the same name, with its own checkpoint.
  std::string rewritten;
  std::vector<std::string> new_hashes;
  std::string prev = GenesisHash("a");
  for (int i = 1; i <= 4; ++i) {
    audit::AuditEvent event = TestEvent(i);
    event.set_reason("innocent");
    prev = AppendAuditLine(i, absl::UnixEpoch(), prev, event, &rewritten);
    new_hashes.push_back(prev);
  }
  audit::AuditCheckpoint checkpoint = Checkpoint("a", 4, new_hashes[3]);
  EXPECT_EQ(VerifyLogContent(rewritten, "a", &checkpoint, nullptr).status(),
            kStatusOk);
  std::map<uint64_t, std::string> witnessed = {{2, hashes[1]}};
  EXPECT_EQ(VerifyLogContent(rewritten, "a", &checkpoint, &witnessed).status(),
            kStatusWitnessMismatch);
}

TEST(VerifyTest, NotJsonAndUnknownVersion) {
  std::vector<std::string> lines = SplitLines(TestLog("a", 3));
  std::vector<std::string> garbage = lines;
  garbage[1] = "hello\n";
  audit::LogReport report =
      VerifyLogContent(Join(garbage), "a", nullptr, nullptr);
  EXPECT_EQ(report.status(), kStatusNotJson);
  EXPECT_EQ(report.line(), 2u);
  std::vector<std::string> future = lines;
  future[2] = "{\"v\":7,\"seq\":3}\n";
  report = VerifyLogContent(Join(future), "a", nullptr, nullptr);
  EXPECT_EQ(report.status(), kStatusUnknownVersion);
  EXPECT_NE(report.message().find("version 7"), std::string::npos);
}

}  // namespace
}  // namespace garuda
