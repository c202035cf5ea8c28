#include "lib/audit/witness_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/crypto/merkle.h"
#include "lib/crypto/note.h"

namespace garuda {
namespace {

using ::testing::HasSubstr;

class WitnessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_ = JoinPath(
        std::getenv("TEST_TMPDIR"),
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(MakeDirectories(state_, 0700).ok());
    log_ = std::make_unique<NoteSigner>(*GenerateNoteSigner("example.com/log"));
    witness_key_ = std::make_shared<const NoteSigner>(
        *GenerateNoteSigner("witness.example/w1"));
    witness_ = std::make_unique<Witness>(
        witness_key_,
        std::vector<NoteVerifier>{VerifierOf(*log_, kNoteEd25519)}, state_,
        [] { return uint64_t{1700000000}; });
    for (int i = 0; i < 40; ++i) tree_.AppendLeaf(absl::StrCat("line ", i));
  }
  std::string Signed(uint64_t size,
                     const std::string& origin = "example.com/log/p",
                     const NoteSigner* signer = nullptr) {
    Checkpoint checkpoint{origin, size, *TreeRoot(size, tree_.Reader()), {}};
    return *SignNote(FormatCheckpoint(checkpoint), signer ? *signer : *log_);
  }
  std::string Request(uint64_t old, uint64_t size, const std::string& note) {
    std::string body = absl::StrCat("old ", old, "\n");
    // Held in a variable: a range-for over *StatusOr() would read a
    // destroyed temporary.
    std::vector<MerkleHash> proof =
        *ConsistencyProof(old, size, tree_.Reader());
    for (const MerkleHash& hash : proof) {
      absl::StrAppend(&body, Base64Encode(HashBytes(hash)), "\n");
    }
    return absl::StrCat(body, "\n", note);
  }
  WitnessAnswer Add(uint64_t old, uint64_t size) {
    return witness_->AddCheckpoint(Request(old, size, Signed(size)));
  }

  std::string state_;
  std::unique_ptr<NoteSigner> log_;
  std::shared_ptr<const NoteSigner> witness_key_;
  std::unique_ptr<Witness> witness_;
  MemoryMerkleTree tree_;
};

TEST_F(WitnessTest, CosignsAConsistentSeriesAndTheCosignatureVerifies) {
  WitnessAnswer first = Add(0, 10);
  ASSERT_EQ(first.status, 200) << first.body;
  std::string note = Signed(10);
  absl::StatusOr<Note> cosigned = ParseNote(note + first.body);
  ASSERT_TRUE(cosigned.ok()) << cosigned.status();
  NoteVerifier cosigner = *ParseNoteVerifier(witness_->CosignerKey());
  EXPECT_EQ(cosigner.type, kNoteCosignatureV1);
  absl::StatusOr<uint64_t> time = VerifyCosignature(*cosigned, cosigner);
  ASSERT_TRUE(time.ok()) << time.status();
  EXPECT_EQ(*time, 1700000000u);
  EXPECT_EQ(Add(10, 25).status, 200);
  EXPECT_EQ(Add(25, 25).status, 200);  // the same checkpoint again
  EXPECT_EQ(Add(25, 40).status, 200);
}

TEST_F(WitnessTest, AnOldSizeThatIsNotTheOneHeldIs409WithTheSize) {
  ASSERT_EQ(Add(0, 10).status, 200);
  WitnessAnswer stale = Add(0, 20);
  EXPECT_EQ(stale.status, 409);
  EXPECT_EQ(stale.content_type, "text/x.tlog.size");
  EXPECT_EQ(stale.body, "10\n");
  EXPECT_EQ(Add(5, 20).status, 409);
  EXPECT_EQ(Add(10, 20).status, 200);  // control: the right old size
}

// A forked checkpoint: another root for a size the witness cosigned, and a
// larger tree that does not extend it. Never cosigned; the state stays.
TEST_F(WitnessTest, AForkIsNeverCosigned) {
  ASSERT_EQ(Add(0, 10).status, 200);
  MemoryMerkleTree fork;
  for (int i = 0; i < 40; ++i) {
    fork.AppendLeaf(i == 3 ? std::string("rewritten")
                           : absl::StrCat("line ", i));
  }
  const auto forked = [&](uint64_t size) {
    return *SignNote(
        FormatCheckpoint(
            {"example.com/log/p", size, *TreeRoot(size, fork.Reader()), {}}),
        *log_);
  };
  // The same size, another root: 409.
  EXPECT_EQ(
      witness_->AddCheckpoint(absl::StrCat("old 10\n\n", forked(10))).status,
      409);
  // A larger forked tree with its own (valid for the fork) proof: 422.
  std::string body = "old 10\n";
  std::vector<MerkleHash> fork_proof = *ConsistencyProof(10, 20, fork.Reader());
  for (const MerkleHash& hash : fork_proof) {
    absl::StrAppend(&body, Base64Encode(HashBytes(hash)), "\n");
  }
  EXPECT_EQ(
      witness_->AddCheckpoint(absl::StrCat(body, "\n", forked(20))).status,
      422);
  // A stale proof (from 9) for the honest tree: 422 as well.
  std::string stale = "old 10\n";
  std::vector<MerkleHash> stale_proof =
      *ConsistencyProof(9, 20, tree_.Reader());
  for (const MerkleHash& hash : stale_proof) {
    absl::StrAppend(&stale, Base64Encode(HashBytes(hash)), "\n");
  }
  EXPECT_EQ(
      witness_->AddCheckpoint(absl::StrCat(stale, "\n", Signed(20))).status,
      422);
  // Control: the honest extension is cosigned; the fork still is not.
  EXPECT_EQ(Add(10, 20).status, 200);
  EXPECT_EQ(
      witness_->AddCheckpoint(absl::StrCat(body, "\n", forked(20))).status,
      409);
}

TEST_F(WitnessTest, SignatureOriginAndSyntaxErrors) {
  NoteSigner stranger = *GenerateNoteSigner("example.com/log");
  // Signed by another key of the same name: 403.
  EXPECT_EQ(witness_
                ->AddCheckpoint(
                    Request(0, 5, Signed(5, "example.com/log/p", &stranger)))
                .status,
            403);
  // A signature that does not verify: 403.
  std::string note = Signed(5);
  std::string tampered = note;
  tampered.replace(tampered.find("\n5\n"), 3, "\n6\n");
  EXPECT_EQ(witness_->AddCheckpoint(Request(0, 6, tampered)).status, 403);
  // An origin no --log key names ("example.com/logX/p" is not
  // "example.com/log/"+...): 404.
  EXPECT_EQ(
      witness_->AddCheckpoint(Request(0, 5, Signed(5, "example.com/logX/p")))
          .status,
      404);
  EXPECT_EQ(
      witness_->AddCheckpoint(Request(0, 5, Signed(5, "example.org/p"))).status,
      404);
  for (const std::string& bad :
       {std::string(""), std::string("old 0\n"),
        absl::StrCat("old 00\n\n", note), absl::StrCat("old -1\n\n", note),
        absl::StrCat("old 0\nnot base64\n\n", note),
        absl::StrCat("new 0\n\n", note), absl::StrCat("old 0\n\n", "no note"),
        absl::StrCat("old 9\n\n", note) /* old > size */}) {
    EXPECT_EQ(witness_->AddCheckpoint(bad).status, 400) << bad;
  }
  std::string many = "old 1\n";
  for (int i = 0; i < 64; ++i) {
    absl::StrAppend(&many, Base64Encode(HashBytes(MerkleEmptyTreeHash())),
                    "\n");
  }
  EXPECT_EQ(witness_->AddCheckpoint(absl::StrCat(many, "\n", note)).status,
            400);
  // Nothing of it was kept: a first checkpoint is still taken at old 0.
  EXPECT_EQ(Add(0, 5).status, 200);
}

// The state is on disk before the answer: a new witness on the same folder
// (a restart) answers from it.
TEST_F(WitnessTest, StateSurvivesARestart) {
  ASSERT_EQ(Add(0, 12).status, 200);
  Witness again(witness_key_, {VerifierOf(*log_, kNoteEd25519)}, state_,
                [] { return uint64_t{1700000001}; });
  WitnessAnswer answer = again.AddCheckpoint(Request(0, 20, Signed(20)));
  EXPECT_EQ(answer.status, 409);
  EXPECT_EQ(answer.body, "12\n");
}

// Many threads race to extend the same checkpoint with different sizes:
// exactly one wins each round, and every cosigned size extends the last.
TEST_F(WitnessTest, RequestsOfOneOriginAreSerialized) {
  ASSERT_EQ(Add(0, 1).status, 200);
  std::atomic<int> won{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      if (Add(1, 2 + t).status == 200) won.fetch_add(1);
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(won.load(), 1);
}

// Over HTTP: a malformed request, a wrong method, a huge head, a slow
// client: each gets its answer (or is dropped) and the server goes on.
TEST_F(WitnessTest, TheServerSurvivesBadInput) {
  int port = 0;
  absl::StatusOr<UniqueFd> listener = ListenOn("127.0.0.1:0", &port);
  ASSERT_TRUE(listener.ok()) << listener.status();
  std::atomic<bool> stop{false};
  HttpLimits limits;
  limits.request = absl::Milliseconds(300);
  limits.idle = absl::Milliseconds(300);
  std::thread server(
      [&] { ServeWitnessHttp(listener->get(), *witness_, limits, 4, &stop); });
  const auto exchange = [&](const std::string& bytes) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(
        ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)),
        0);
    ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    ::shutdown(fd, SHUT_WR);
    std::string answer;
    char buffer[4096];
    ssize_t got;
    while ((got = ::recv(fd, buffer, sizeof(buffer), 0)) > 0)
      answer.append(buffer, got);
    ::close(fd);
    return answer;
  };
  const std::string body = Request(0, 7, Signed(7));
  const auto post = [&](const std::string& extra_headers,
                        const std::string& b) {
    return absl::StrCat("POST /add-checkpoint HTTP/1.1\r\nHost: x\r\n",
                        extra_headers, "Content-Length: ", b.size(), "\r\n\r\n",
                        b);
  };
  EXPECT_THAT(exchange("GARBAGE\r\n\r\n"), HasSubstr("HTTP/1.1 400"));
  EXPECT_THAT(exchange("GET /add-checkpoint HTTP/1.1\r\n\r\n"),
              HasSubstr("HTTP/1.1 405"));
  EXPECT_THAT(exchange("POST /other HTTP/1.1\r\nContent-Length: 0\r\n\r\n"),
              HasSubstr("HTTP/1.1 404"));
  EXPECT_THAT(exchange("POST /add-checkpoint HTTP/1.1\r\n\r\n"),
              HasSubstr("HTTP/1.1 411"));
  EXPECT_THAT(exchange(post("Transfer-Encoding: chunked\r\n", body)),
              HasSubstr("HTTP/1.1 501"));
  EXPECT_THAT(exchange(post("Content-Length: 3\r\n", body)),
              HasSubstr("HTTP/1.1 400"));
  EXPECT_THAT(exchange(post(" folded\r\n", body)), HasSubstr("HTTP/1.1 400"));
  EXPECT_THAT(exchange(absl::StrCat("POST /add-checkpoint HTTP/1.1\r\nX: ",
                                    std::string(20000, 'a'), "\r\n\r\n")),
              HasSubstr("HTTP/1.1 431"));
  EXPECT_THAT(
      exchange(
          "POST /add-checkpoint HTTP/1.1\r\nContent-Length: 999999999\r\n\r\n"),
      HasSubstr("HTTP/1.1 413"));
  // A body shorter than announced: dropped at the deadline, no answer.
  EXPECT_EQ(
      exchange(
          "POST /add-checkpoint HTTP/1.1\r\nContent-Length: 50\r\n\r\nold"),
      "");
  // Then a good request, and two on one kept-alive connection.
  std::string good = exchange(post("Connection: close\r\n", body));
  EXPECT_THAT(good, HasSubstr("HTTP/1.1 200"));
  EXPECT_THAT(good, HasSubstr("\xE2\x80\x94 witness.example/w1 "));
  std::string two =
      exchange(post("", Request(7, 9, Signed(9))) +
               post("Connection: close\r\n", Request(9, 11, Signed(11))));
  EXPECT_EQ(two.find("HTTP/1.1 200"), 0u) << two;
  EXPECT_NE(two.find("HTTP/1.1 200", 10), std::string::npos) << two;
  stop.store(true);
  server.join();
}

}  // namespace
}  // namespace garuda
