#include "lib/ipc/channel.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/ipc/ipc_test.pb.h"
#include "lib/ipc/testing/test_util.h"

namespace garuda {
namespace ipc {
namespace {

using ipc_test::EchoRequest;
using ::testing::HasSubstr;

struct Pipe {
  UniqueFd read_end, write_end;
};

Pipe MakePipe() {
  int ends[2];
  EXPECT_EQ(::pipe2(ends, O_CLOEXEC), 0);
  return Pipe{UniqueFd(ends[0]), UniqueFd(ends[1])};
}

EchoRequest EchoOf(uint64_t seq, const std::string& text) {
  EchoRequest request;
  request.set_seq(seq);
  request.mutable_echo()->set_text(text);
  return request;
}

class ChannelTest : public ::testing::Test {
 protected:
  void SetUp() override { MakeChannels(/*b_reads_ahead=*/false); }
  void MakeChannels(bool b_reads_ahead) {
    auto pair = MakeSocketPair();
    ASSERT_TRUE(pair.ok()) << pair.status();
    ChannelOptions a_options, b_options;
    a_options.peer_name = "side-b";
    b_options.peer_name = "side-a";
    b_options.read_ahead = b_reads_ahead;
    a_ = std::make_unique<Channel>(std::move(pair->first), a_options);
    b_ = std::make_unique<Channel>(std::move(pair->second), b_options);
  }
  // b's socket, for raw writes that Channel::Send would refuse.
  int raw_a() { return a_->fd(); }
  // After copies of `pipe`'s write end were sent to b: closes ours, has b
  // receive (expecting a refusal), and checks that no descriptor was handed
  // out or left open (the pipe's reader sees end of file, so every copy of
  // the write end is closed). Returns the refusal.
  absl::Status ReceiveRefused(Pipe& pipe, bool want_fds) {
    pipe.write_end.Reset();
    std::vector<int> before = OpenFds();
    EchoRequest got;
    std::vector<UniqueFd> fds;
    absl::Status status = b_->Receive(&got, want_fds ? &fds : nullptr);
    EXPECT_TRUE(fds.empty());
    for (int fd : OpenFds()) {
      EXPECT_NE(std::find(before.begin(), before.end(), fd), before.end())
          << "descriptor " << fd << " leaked";
    }
    auto rest = ReadAll(pipe.read_end.get());
    EXPECT_TRUE(rest.ok());
    EXPECT_EQ(rest.value_or("not read"), "");
    return status;
  }

  std::unique_ptr<Channel> a_, b_;
};

TEST_F(ChannelTest, RoundTrip) {
  ASSERT_TRUE(a_->Send(EchoOf(1, "hello")).ok());
  ASSERT_TRUE(a_->Send(EchoOf(2, std::string(100000, 'x'))).ok());
  EchoRequest got;
  ASSERT_TRUE(b_->Receive(&got).ok());
  EXPECT_EQ(got.seq(), 1u);
  EXPECT_EQ(got.echo().text(), "hello");
  ASSERT_TRUE(b_->Receive(&got).ok());
  EXPECT_EQ(got.seq(), 2u);
  EXPECT_EQ(got.echo().text().size(), 100000u);
  // And the other way.
  ASSERT_TRUE(b_->Send(EchoOf(7, "back")).ok());
  ASSERT_TRUE(a_->Receive(&got).ok());
  EXPECT_EQ(got.echo().text(), "back");
}

TEST_F(ChannelTest, EmptyMessageIsAZeroLengthFrame) {
  ASSERT_TRUE(a_->Send(EchoRequest()).ok());
  EchoRequest got = EchoOf(9, "stale");
  ASSERT_TRUE(b_->Receive(&got).ok());
  EXPECT_EQ(got.seq(), 0u);
  EXPECT_EQ(got.verb_case(), EchoRequest::VERB_NOT_SET);
}

TEST_F(ChannelTest, DescriptorRoundTripWritesThroughThePipe) {
  Pipe pipe = MakePipe();
  ASSERT_TRUE(a_->Send(EchoOf(1, "with fd"), {pipe.write_end.get()}).ok());
  ASSERT_TRUE(a_->Send(EchoOf(2, "without")).ok());
  pipe.write_end.Reset();  // Only the received copy is left.

  EchoRequest got;
  std::vector<UniqueFd> fds;
  ASSERT_TRUE(b_->Receive(&got, &fds).ok());
  ASSERT_EQ(fds.size(), 1u);
  EXPECT_EQ(got.echo().text(), "with fd");
  // Received close-on-exec.
  EXPECT_EQ(::fcntl(fds[0].get(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  ASSERT_TRUE(WriteAll(fds[0].get(), "through the pipe").ok());
  fds.clear();
  auto text = ReadAll(pipe.read_end.get());
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "through the pipe");

  ASSERT_TRUE(b_->Receive(&got, &fds).ok());
  EXPECT_TRUE(fds.empty());
  EXPECT_EQ(got.echo().text(), "without");
}

TEST_F(ChannelTest, CleanCloseIsOutOfRangeAndNotAnError) {
  a_->Close();
  EchoRequest got;
  absl::Status status = b_->Receive(&got);
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("side-a closed"));
  EXPECT_TRUE(b_->status().ok());
}

TEST_F(ChannelTest, OversizedLengthEndsTheChannel) {
  ASSERT_TRUE(SendRaw(raw_a(), LengthPrefix(9000000)).ok());
  ASSERT_TRUE(a_->Send(EchoOf(1, "valid after")).ok());
  EchoRequest got;
  absl::Status status = b_->Receive(&got);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_EQ(status.message(),
            "side-a: frame of 9000000 bytes over the 1048576-byte limit");
  // Ended: a valid frame after it is not read.
  status = b_->Receive(&got);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_FALSE(b_->status().ok());
  EXPECT_FALSE(b_->Send(EchoOf(1, "x")).ok());
}

TEST_F(ChannelTest, CapIsPerChannel) {
  auto pair = MakeSocketPair();
  ASSERT_TRUE(pair.ok());
  ChannelOptions small;
  small.max_frame_bytes = 16;
  Channel sender(std::move(pair->first));
  Channel receiver(std::move(pair->second), small);
  ASSERT_TRUE(sender.Send(EchoOf(1, std::string(100, 'y'))).ok());
  EchoRequest got;
  EXPECT_EQ(receiver.Receive(&got).code(),
            absl::StatusCode::kResourceExhausted);
}

TEST_F(ChannelTest, SendRefusesOversizedAndGoesOn) {
  auto pair = MakeSocketPair();
  ASSERT_TRUE(pair.ok());
  ChannelOptions small;
  small.max_frame_bytes = 16;
  Channel sender(std::move(pair->first), small);
  Channel receiver(std::move(pair->second));
  EXPECT_EQ(sender.Send(EchoOf(1, std::string(100, 'y'))).code(),
            absl::StatusCode::kResourceExhausted);
  ASSERT_TRUE(sender.Send(EchoOf(2, "ok")).ok());
  EchoRequest got;
  ASSERT_TRUE(receiver.Receive(&got).ok());
  EXPECT_EQ(got.seq(), 2u);
}

TEST_F(ChannelTest, TruncatedHeaderIsDataLoss) {
  ASSERT_TRUE(SendRaw(raw_a(), std::string("\x05\x00", 2)).ok());
  a_->Close();
  EchoRequest got;
  absl::Status status = b_->Receive(&got);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("after 2 of 4 header bytes"));
}

TEST_F(ChannelTest, TruncatedBodyIsDataLoss) {
  ASSERT_TRUE(SendRaw(raw_a(), LengthPrefix(10) + "abcde").ok());
  a_->Close();
  EchoRequest got;
  absl::Status status = b_->Receive(&got);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("after 5 of 10 body bytes"));
}

TEST_F(ChannelTest, UnparsableBytesAreInvalidArgument) {
  // Field number 0 is never valid in the protobuf wire format.
  ASSERT_TRUE(
      SendRaw(raw_a(), LengthPrefix(2) + std::string("\x00\x01", 2)).ok());
  EchoRequest got;
  absl::Status status = b_->Receive(&got);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("does not parse as garuda.ipc_test.EchoRequest"));
}

TEST_F(ChannelTest, OneDescriptorOverTheCapIsRefusedAndClosed) {
  Pipe pipe = MakePipe();
  std::vector<int> five(5, pipe.write_end.get());
  ASSERT_TRUE(SendRaw(raw_a(), Frame(EchoOf(1, "x")), five).ok());
  absl::Status status = ReceiveRefused(pipe, /*want_fds=*/true);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("5 descriptors on one frame, over the limit of 4"));
}

TEST_F(ChannelTest, ManyDescriptorsTruncateControlDataAndAreRefused) {
  Pipe pipe = MakePipe();
  std::vector<int> many(40, pipe.write_end.get());
  ASSERT_TRUE(SendRaw(raw_a(), Frame(EchoOf(1, "x")), many).ok());
  absl::Status status = ReceiveRefused(pipe, /*want_fds=*/true);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("control data truncated"));
}

TEST_F(ChannelTest, DescriptorsWhereNoneAreExpectedAreRefusedAndClosed) {
  Pipe pipe = MakePipe();
  ASSERT_TRUE(a_->Send(EchoOf(1, "x"), {pipe.write_end.get()}).ok());
  absl::Status status = ReceiveRefused(pipe, /*want_fds=*/false);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("where none are expected"));
}

TEST_F(ChannelTest, DescriptorsInsideABodyAreRefused) {
  Pipe pipe = MakePipe();
  std::string frame = Frame(EchoOf(1, "some text"));
  ASSERT_TRUE(SendRaw(raw_a(), frame.substr(0, 6)).ok());
  ASSERT_TRUE(SendRaw(raw_a(), frame.substr(6), {pipe.write_end.get()}).ok());
  absl::Status status = ReceiveRefused(pipe, /*want_fds=*/true);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("not on the first byte of a frame"));
}

TEST_F(ChannelTest, SendRefusesTooManyDescriptors) {
  Pipe pipe = MakePipe();
  std::vector<int> five(5, pipe.write_end.get());
  EXPECT_EQ(a_->Send(EchoOf(1, "x"), five).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(a_->status().ok());
}

TEST_F(ChannelTest, SendToAClosedPeerIsUnavailableNotSigpipe) {
  // With the default SIGPIPE action a plain write() here would kill the
  // test; MSG_NOSIGNAL turns it into EPIPE.
  struct sigaction old_action;
  struct sigaction default_action = {};
  default_action.sa_handler = SIG_DFL;
  ASSERT_EQ(::sigaction(SIGPIPE, &default_action, &old_action), 0);
  b_->Close();
  absl::Status status = a_->Send(EchoOf(1, std::string(1000, 'z')));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("side-b closed"));
  ::sigaction(SIGPIPE, &old_action, nullptr);
}

TEST_F(ChannelTest, ClosedChannelFailsAtOnce) {
  a_->Close();
  EchoRequest got;
  EXPECT_EQ(a_->Receive(&got).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(a_->Send(got).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(a_->fd(), -1);
}

// A receive timeout (SO_RCVTIMEO, as a server that polls many channels may
// set) before a frame begins leaves the channel usable; inside a frame it
// ends it. Nothing more is ever sent in either case, so the outcome does not
// depend on timing.
TEST_F(ChannelTest, ReceiveTimeoutBetweenFramesKeepsTheChannel) {
  struct timeval timeout = {0, 10000};
  ASSERT_EQ(::setsockopt(b_->fd(), SOL_SOCKET, SO_RCVTIMEO, &timeout,
                         sizeof(timeout)),
            0);
  EchoRequest got;
  absl::Status status = b_->Receive(&got);
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_TRUE(b_->status().ok());
  ASSERT_TRUE(a_->Send(EchoOf(1, "later")).ok());
  ASSERT_TRUE(b_->Receive(&got).ok());
  EXPECT_EQ(got.echo().text(), "later");
}

TEST_F(ChannelTest, ReceiveTimeoutInsideAFrameEndsTheChannel) {
  struct timeval timeout = {0, 10000};
  ASSERT_EQ(::setsockopt(b_->fd(), SOL_SOCKET, SO_RCVTIMEO, &timeout,
                         sizeof(timeout)),
            0);
  ASSERT_TRUE(SendRaw(raw_a(), LengthPrefix(10) + "abc").ok());
  EchoRequest got;
  absl::Status status = b_->Receive(&got);
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("after 3 of 10 bytes"));
  EXPECT_FALSE(b_->status().ok());
}

TEST_F(ChannelTest, ReceiveWatchingStopsWhenTheWatchedFdFires) {
  Pipe watch = MakePipe();
  // Half a frame, then the watched descriptor fires: no hang.
  ASSERT_TRUE(SendRaw(raw_a(), LengthPrefix(10) + "abc").ok());
  ASSERT_TRUE(WriteAll(watch.write_end.get(), "!").ok());
  EchoRequest got;
  absl::Status status =
      b_->ReceiveWatching(&got, nullptr, watch.read_end.get());
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("after 3 of 10"));
}

TEST_F(ChannelTest, ReceiveWatchingReadsWhatIsThereFirst) {
  Pipe watch = MakePipe();
  ASSERT_TRUE(a_->Send(EchoOf(1, "first")).ok());
  ASSERT_TRUE(WriteAll(watch.write_end.get(), "!").ok());
  EchoRequest got;
  ASSERT_TRUE(b_->ReceiveWatching(&got, nullptr, watch.read_end.get()).ok());
  EXPECT_EQ(got.echo().text(), "first");
}

// The wait is in a blocking read with the watch looked at every tick; on a
// socket that never blocks (O_NONBLOCK) the read returns at once, and the
// wait must then happen in poll, not in a loop of reads. The watch fires
// from another thread after a while: the receiving thread's CPU time over
// that wait stays small (a loop of reads would use all of it).
TEST_F(ChannelTest, ReceiveWatchingWaitsOnANonBlockingSocketWithoutSpinning) {
  int flags = ::fcntl(b_->fd(), F_GETFL);
  ASSERT_EQ(::fcntl(b_->fd(), F_SETFL, flags | O_NONBLOCK), 0);
  Pipe watch = MakePipe();
  std::thread fire([&] {
    struct timespec wait = {0, 400 * 1000 * 1000};
    ::nanosleep(&wait, nullptr);
    (void)WriteAll(watch.write_end.get(), "!");
  });
  struct timespec cpu_before, cpu_after;
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_before);
  EchoRequest got;
  absl::Status status =
      b_->ReceiveWatching(&got, nullptr, watch.read_end.get());
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_after);
  fire.join();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  const double cpu_ms = (cpu_after.tv_sec - cpu_before.tv_sec) * 1e3 +
                        (cpu_after.tv_nsec - cpu_before.tv_nsec) / 1e6;
  EXPECT_LT(cpu_ms, 100) << "the wait spun on the socket";
}

// With read_ahead the receiver takes whatever has arrived in one read and
// keeps the bytes past the frame for the next call.
class ReadAheadTest : public ChannelTest {
 protected:
  void SetUp() override { MakeChannels(/*b_reads_ahead=*/true); }
};

TEST_F(ReadAheadTest, FramesSentTogetherAreHandedOutOneByOne) {
  ASSERT_TRUE(a_->Send(EchoOf(1, "one")).ok());
  ASSERT_TRUE(a_->Send(EchoOf(2, std::string(100000, 'x'))).ok());
  ASSERT_TRUE(a_->Send(EchoOf(3, "three")).ok());
  EchoRequest got;
  ASSERT_TRUE(b_->Receive(&got).ok());
  EXPECT_EQ(got.echo().text(), "one");
  ASSERT_TRUE(b_->Receive(&got).ok());
  EXPECT_EQ(got.echo().text().size(), 100000u);
  ASSERT_TRUE(b_->Receive(&got).ok());
  EXPECT_EQ(got.echo().text(), "three");
  EXPECT_FALSE(b_->has_buffered_frame());
}

TEST_F(ReadAheadTest, AFrameReadAheadIsSaidAndNeedsNoRead) {
  ASSERT_TRUE(a_->Send(EchoOf(1, "one")).ok());
  ASSERT_TRUE(a_->Send(EchoOf(2, "two")).ok());
  a_->Close();  // nothing more can arrive
  EchoRequest got;
  ASSERT_TRUE(b_->Receive(&got).ok());
  EXPECT_EQ(got.seq(), 1u);
  // Both small frames came in one read: the second waits in the channel.
  EXPECT_TRUE(b_->has_buffered_frame());
  ASSERT_TRUE(b_->Receive(&got).ok());
  EXPECT_EQ(got.seq(), 2u);
  EXPECT_FALSE(b_->has_buffered_frame());
  EXPECT_EQ(b_->Receive(&got).code(), absl::StatusCode::kOutOfRange);
}

TEST_F(ReadAheadTest, DescriptorsOnAFrameAloneArrive) {
  Pipe pipe = MakePipe();
  ASSERT_TRUE(a_->Send(EchoOf(1, "with fd"), {pipe.write_end.get()}).ok());
  EchoRequest got;
  std::vector<UniqueFd> fds;
  ASSERT_TRUE(b_->Receive(&got, &fds).ok());
  ASSERT_EQ(fds.size(), 1u);
  EXPECT_EQ(got.echo().text(), "with fd");
}

TEST_F(ReadAheadTest, DescriptorsReadTogetherWithAnotherFrameAreRefused) {
  Pipe pipe = MakePipe();
  ASSERT_TRUE(a_->Send(EchoOf(1, "first")).ok());
  ASSERT_TRUE(a_->Send(EchoOf(2, "with fd"), {pipe.write_end.get()}).ok());
  absl::Status status = ReceiveRefused(pipe, /*want_fds=*/true);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("before its answer"));
}

TEST_F(ChannelTest, NegativeControlWithoutReadAheadThoseDescriptorsArrive) {
  Pipe pipe = MakePipe();
  ASSERT_TRUE(a_->Send(EchoOf(1, "first")).ok());
  ASSERT_TRUE(a_->Send(EchoOf(2, "with fd"), {pipe.write_end.get()}).ok());
  EchoRequest got;
  std::vector<UniqueFd> fds;
  ASSERT_TRUE(b_->Receive(&got, &fds).ok());
  EXPECT_TRUE(fds.empty());
  ASSERT_TRUE(b_->Receive(&got, &fds).ok());
  EXPECT_EQ(fds.size(), 1u);
}

TEST_F(ReadAheadTest, TruncatedFrameIsStillDataLoss) {
  ASSERT_TRUE(
      SendRaw(raw_a(), Frame(EchoOf(1, "whole")) + LengthPrefix(10) + "abc")
          .ok());
  a_->Close();
  EchoRequest got;
  ASSERT_TRUE(b_->Receive(&got).ok());
  absl::Status status = b_->Receive(&got);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("after 3 of 10"));
}

}  // namespace
}  // namespace ipc
}  // namespace garuda
