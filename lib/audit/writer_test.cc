#include "lib/audit/writer.h"

#include <sys/stat.h>

#include <cstdlib>

#include "gtest/gtest.h"
#include "lib/audit/json_records.h"
#include "lib/audit/test_util.h"
#include "lib/audit/verify.h"
#include "lib/base/files.h"
#include "lib/base/json_message.h"
#include "lib/crypto/note.h"

namespace garuda {
namespace {

class WriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = JoinPath(
        std::getenv("TEST_TMPDIR"),
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(MakeDirectories(JoinPath(base_, "project"), 0755).ok());
    options_.audit_root = JoinPath(base_, "home/.garuda/audit");
    options_.project = JoinPath(base_, "project");
  }
  std::unique_ptr<AuditWriter> Open() {
    absl::StatusOr<std::unique_ptr<AuditWriter>> writer =
        AuditWriter::Open(options_);
    EXPECT_TRUE(writer.ok()) << writer.status();
    return writer.ok() ? std::move(writer).value() : nullptr;
  }
  audit::LogReport Verify(const AuditWriter& writer, bool with_checkpoint) {
    std::string content = ReadFileToString(writer.log_path()).value();
    audit::AuditCheckpoint checkpoint;
    bool have = with_checkpoint &&
                ReadJsonMessageFile(writer.checkpoint_path(), &checkpoint).ok();
    return VerifyLogContent(content, writer.log_name(),
                            have ? &checkpoint : nullptr, nullptr);
  }
  audit::AuditCheckpoint ReadCheckpoint(const AuditWriter& writer) {
    audit::AuditCheckpoint checkpoint;
    EXPECT_TRUE(
        ReadJsonMessageFile(writer.checkpoint_path(), &checkpoint).ok());
    return checkpoint;
  }

  std::string base_;
  WriterOptions options_;
};

mode_t Mode(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST_F(WriterTest, WritesAVerifiableChainWithPrivateModes) {
  ::umask(022);
  std::unique_ptr<AuditWriter> writer = Open();
  ASSERT_NE(writer, nullptr);
  std::vector<audit::AuditEvent> events = {TestEvent(1), TestEvent(2),
                                           TestEvent(3)};
  absl::StatusOr<AppendResult> result = writer->Append(events, false);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->first_seq, 1u);
  EXPECT_EQ(result->last_seq, 3u);
  ASSERT_TRUE(writer->Close().ok());
  EXPECT_EQ(Mode(writer->folder()), 0700u);
  EXPECT_EQ(Mode(writer->log_path()), 0600u);
  EXPECT_EQ(writer->folder(),
            JoinPath(options_.audit_root, writer->folder_name()));
  EXPECT_EQ(writer->folder_name().rfind("project-", 0), 0u);
  audit::LogReport report = Verify(*writer, false);
  EXPECT_EQ(report.status(), kStatusOk) << report.message();
  EXPECT_EQ(report.lines(), 4u);  // and the session_end line
  EXPECT_NE(report.message().find(", closed"), std::string::npos);
}

TEST_F(WriterTest, TwoWritersTwoLogs) {
  std::unique_ptr<AuditWriter> a = Open();
  std::unique_ptr<AuditWriter> b = Open();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a->log_path(), b->log_path());
  options_.log_name = a->log_name();
  EXPECT_TRUE(absl::IsAlreadyExists(AuditWriter::Open(options_).status()));
  options_.log_name = "../escape";
  EXPECT_TRUE(absl::IsInvalidArgument(AuditWriter::Open(options_).status()));
}

TEST_F(WriterTest, CheckpointHoldsOnlyTheHead) {
  options_.config.checkpoint = true;
  std::unique_ptr<AuditWriter> writer = Open();
  ASSERT_NE(writer, nullptr);
  EXPECT_EQ(ReadCheckpoint(*writer).seq(), 0u);
  ASSERT_TRUE(writer->Append({TestEvent(1), TestEvent(2)}, true).ok());
  std::string checkpoint_text =
      ReadFileToString(writer->checkpoint_path()).value();
  std::string log_text = ReadFileToString(writer->log_path()).value();
  EXPECT_EQ(Mode(writer->checkpoint_path()), 0600u);
  // Negative control: the log itself does hold the target and reason text.
  EXPECT_NE(log_text.find("secret reason 2"), std::string::npos);
  EXPECT_NE(log_text.find("src/file2.ts"), std::string::npos);
  EXPECT_EQ(checkpoint_text.find("secret"), std::string::npos);
  EXPECT_EQ(checkpoint_text.find("src/"), std::string::npos);
  audit::AuditCheckpoint checkpoint = ReadCheckpoint(*writer);
  EXPECT_EQ(checkpoint_text, CheckpointJson(checkpoint) + "\n");
  EXPECT_EQ(checkpoint.log(), writer->log_name());
  EXPECT_EQ(checkpoint.seq(), 2u);
  EXPECT_EQ(Verify(*writer, true).status(), kStatusOk);
}

TEST_F(WriterTest, GroupedFsyncByLineCount) {
  options_.config.checkpoint = true;
  options_.config.fsync_max_lines = 3;
  std::unique_ptr<AuditWriter> writer = Open();
  ASSERT_NE(writer, nullptr);
  absl::StatusOr<AppendResult> result = writer->Append({TestEvent(1)}, false);
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result->durable);
  ASSERT_TRUE(writer->Append({TestEvent(2)}, false).ok());
  EXPECT_EQ(ReadCheckpoint(*writer).seq(), 0u);
  result = writer->Append({TestEvent(3)}, false);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->durable);
  EXPECT_EQ(ReadCheckpoint(*writer).seq(), 3u);
  // A request that asks for durability gets it at once.
  result = writer->Append({TestEvent(4)}, true);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->durable);
  EXPECT_EQ(ReadCheckpoint(*writer).seq(), 4u);
}

TEST_F(WriterTest, GroupedFsyncByAge) {
  options_.config.checkpoint = true;
  options_.config.fsync_max_lines = 1000;
  options_.config.fsync_max_ms = 20;
  std::unique_ptr<AuditWriter> writer = Open();
  ASSERT_NE(writer, nullptr);
  writer->StartTimedSync();
  ASSERT_TRUE(writer->Append({TestEvent(1)}, false).ok());
  // Waits for the condition (with a generous cap), not for a fixed time.
  absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (ReadCheckpoint(*writer).seq() != 1 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_EQ(ReadCheckpoint(*writer).seq(), 1u);
}

TEST_F(WriterTest, BadEventWritesNothing) {
  std::unique_ptr<AuditWriter> writer = Open();
  ASSERT_NE(writer, nullptr);
  audit::AuditEvent bad;
  absl::StatusOr<AppendResult> result =
      writer->Append({TestEvent(1), bad}, false);
  EXPECT_TRUE(absl::IsInvalidArgument(result.status()));
  EXPECT_NE(result.status().message().find("event 2"), absl::string_view::npos);
  EXPECT_EQ(ReadFileToString(writer->log_path()).value(), "");
  ASSERT_TRUE(writer->Append({TestEvent(1)}, false).ok());
  EXPECT_EQ(Verify(*writer, false).lines(), 1u);
}

TEST_F(WriterTest, WitnessGetsHeadsAndItsFailureIsLogged) {
  std::string heads = JoinPath(base_, "heads.txt");
  options_.config.checkpoint_command =
      absl::StrCat("while read -r line; do echo \"$line\" >> '", heads,
                   "'; echo '{\"ok\":true}'; done");
  options_.config.checkpoint_every = 2;
  std::unique_ptr<AuditWriter> writer = Open();
  ASSERT_NE(writer, nullptr);
  for (int i = 1; i <= 5; ++i)
    ASSERT_TRUE(writer->Append({TestEvent(i)}, false).ok());
  absl::StatusOr<AppendResult> closed = writer->Close();
  ASSERT_TRUE(closed.ok()) << closed.status();
  EXPECT_TRUE(closed->warnings.empty());
  std::vector<std::string> sent = SplitLines(ReadFileToString(heads).value());
  ASSERT_EQ(sent.size(), 3u);  // seq 2, 4, and 6 (session_end) at the end
  audit::WitnessHead last;
  ASSERT_TRUE(ParseJsonMessage(sent[2], "head", &last).ok());
  EXPECT_EQ(last.seq(), 6u);
  EXPECT_EQ(last.prev_seq(), 4u);
  EXPECT_EQ(last.log(), writer->log_name());

  // A witness that dies: the failure is a line of the log and a warning.
  options_.config.checkpoint_command = "read -r line; exit 3";
  std::unique_ptr<AuditWriter> failing = Open();
  ASSERT_NE(failing, nullptr);
  ASSERT_TRUE(failing->Append({TestEvent(1)}, false).ok());
  absl::StatusOr<AppendResult> result = failing->Append({TestEvent(2)}, false);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->warnings.size(), 1u);
  EXPECT_NE(result->warnings[0].find("exited with status 3"), std::string::npos)
      << result->warnings[0];
  EXPECT_EQ(result->last_seq, 3u);
  std::string log = ReadFileToString(failing->log_path()).value();
  EXPECT_NE(log.find("\"kind\":\"witness_failed\""), std::string::npos);
  EXPECT_EQ(Verify(*failing, false).status(), kStatusOk);
}

TEST(AuditConfigTest, OnlyPolicyFilesCount) {
  SettingsSources sources;
  sources.project_settings.mutable_audit()->set_checkpoint(true);
  sources.project_settings.mutable_audit()->set_checkpoint_command("evil");
  sources.project_settings.mutable_audit()->set_fsync_max_lines(1000000);
  sources.project_settings_path = "/p/.garuda/settings.json";
  AuditConfig config = AuditConfigFromSources(sources);
  EXPECT_FALSE(config.checkpoint);
  EXPECT_TRUE(config.checkpoint_command.empty());
  EXPECT_EQ(config.fsync_max_lines, 1000u);
  EXPECT_EQ(config.ignored.size(), 3u);

  sources.user_policy.mutable_audit()->set_checkpoint(true);
  sources.user_policy_path = "/h/.garuda/policy.json";
  config = AuditConfigFromSources(sources);
  EXPECT_TRUE(config.checkpoint);
  EXPECT_EQ(config.checkpoint_source, "/h/.garuda/policy.json");

  // A project cannot turn it off either; the managed policy can.
  sources.project_settings.mutable_audit()->set_checkpoint(false);
  EXPECT_TRUE(AuditConfigFromSources(sources).checkpoint);
  sources.managed_policy.mutable_audit()->set_checkpoint(false);
  EXPECT_FALSE(AuditConfigFromSources(sources).checkpoint);

  sources.user_settings.mutable_audit()->set_fsync_max_ms(7);
  EXPECT_EQ(AuditConfigFromSources(sources).fsync_max_ms, 7u);
}

TEST(WitnessStoreTest, RefusesBackwardsAndDifferentHeads) {
  std::string path = JoinPath(std::getenv("TEST_TMPDIR"), "store.jsonl");
  absl::StatusOr<WitnessStore> store = WitnessStore::Open(path);
  ASSERT_TRUE(store.ok());
  std::string h1(64, 'a'), h2(64, 'b'), h3(64, 'c');
  auto head = [](uint64_t seq, const std::string& hash, uint64_t prev_seq,
                 const std::string& prev_hash) {
    audit::WitnessHead head;
    head.set_dir("p-1");
    head.set_log("log1");
    head.set_seq(seq);
    head.set_hash(hash);
    head.set_prev_seq(prev_seq);
    head.set_prev_hash(prev_hash);
    return head;
  };
  EXPECT_TRUE(store->Accept(head(10, h1, 0, "")).ok());
  EXPECT_TRUE(store->Accept(head(20, h2, 10, h1)).ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(store->Accept(head(15, h3, 10, h1))));
  EXPECT_TRUE(absl::IsFailedPrecondition(store->Accept(head(20, h3, 10, h1))));
  EXPECT_TRUE(absl::IsFailedPrecondition(store->Accept(head(30, h3, 10, h1))));
  EXPECT_TRUE(store->Accept(head(20, h2, 10, h1)).ok());  // the same again
  // A second witness on the same store sees the first one's heads.
  absl::StatusOr<WitnessStore> second = WitnessStore::Open(path);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(second->Accept(head(5, h3, 0, ""))));
  EXPECT_TRUE(second->Accept(head(30, h3, 20, h2)).ok());
  absl::StatusOr<WitnessedHeads> heads = ReadWitnessStore(path);
  ASSERT_TRUE(heads.ok());
  auto held = heads->find({"p-1", "log1"});
  ASSERT_NE(held, heads->end());
  EXPECT_EQ(held->second.size(), 3u);
}

}  // namespace
}  // namespace garuda

namespace garuda {
namespace {

// The tree is signed after the log's fsync, at once when a caller asks for
// durability, else once fsyncMaxMs passed since the last signature (here
// by the timed sync); both checkpoints are put in place with no temporary
// file left. The tree's entries are synced (tree/durable) with each
// signature and at the close, not with a group. Control: a group before
// its time leaves the signed and the synced size as they were.
TEST_F(WriterTest, TheTreeIsSignedAndSyncedWhenAskedOrDue) {
  options_.config.checkpoint = true;
  options_.config.fsync_max_lines = 2;
  options_.config.fsync_max_ms = 1000;
  options_.signer = std::make_shared<const NoteSigner>(
      GenerateNoteSigner("test.example/writer").value());
  std::unique_ptr<AuditWriter> writer = Open();
  ASSERT_NE(writer, nullptr);
  const std::string tree = TreeFolderOf(writer->folder());
  auto signed_size = [&] {
    std::string text =
        ReadFileToString(JoinPath(tree, "checkpoint")).value_or("");
    absl::StatusOr<Note> note = ParseNote(text);
    if (!note.ok()) return uint64_t{999};
    return ParseCheckpoint(note->text).value().size;
  };
  auto durable_size = [&] {
    return ReadFileToString(JoinPath(tree, "durable"))
        .value_or("")
        .substr(0, 20);
  };
  EXPECT_EQ(signed_size(), 0u);
  EXPECT_EQ(durable_size(), "00000000000000000000");
  const absl::Time before_signature = absl::Now();
  ASSERT_TRUE(writer->Append({TestEvent(1)}, true).ok());
  EXPECT_EQ(signed_size(), 1u);
  // The entries a checkpoint signs are synced with it.
  EXPECT_EQ(durable_size(), "00000000000000000001");
  // A group (two lines) right after that signature: synced, not signed
  // (unless this machine stalled for fsyncMaxMs in between).
  ASSERT_TRUE(writer->Append({TestEvent(2), TestEvent(3)}, false).ok());
  EXPECT_EQ(ReadCheckpoint(*writer).seq(), 3u);
  if (absl::Now() - before_signature < absl::Seconds(1)) {
    EXPECT_EQ(signed_size(), 1u);
    EXPECT_EQ(durable_size(), "00000000000000000001");
  }
  // The timed sync signs it once fsyncMaxMs has passed.
  writer->StartTimedSync();
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  // (tree/durable is written right after the checkpoint's rename.)
  while ((signed_size() != 3u || durable_size() != "00000000000000000003") &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(signed_size(), 3u);
  EXPECT_EQ(Mode(JoinPath(tree, "checkpoint")), 0600u);
  EXPECT_FALSE(ReadFileToString(JoinPath(tree, "checkpoint.tmp")).ok());
  EXPECT_FALSE(
      ReadFileToString(absl::StrCat(writer->checkpoint_path(), ".tmp")).ok());
  EXPECT_EQ(durable_size(), "00000000000000000003");
  ASSERT_TRUE(writer->Close().ok());
  EXPECT_EQ(signed_size(), 4u);
  EXPECT_EQ(durable_size(), "00000000000000000004");
}

}  // namespace
}  // namespace garuda
