// At least 100 000 random inputs (seeded, reproducible) for the frame reader
// and the dispatcher: random bytes, and valid frames mutated by bit flips,
// cuts, insertions and rewritten lengths, some with descriptors riding on
// them. The reader must never crash, never hand out or leak a descriptor
// from a bad frame, and always end with one of the documented codes. Built
// with AddressSanitizer (see BUILD.bazel), so a read past a buffer fails.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "google/protobuf/stubs/logging.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/ipc/channel.h"
#include "lib/ipc/dispatcher.h"
#include "lib/ipc/ipc_test.pb.h"
#include "lib/ipc/testing/test_util.h"

#ifndef __SANITIZE_ADDRESS__
#error "channel_fuzz_test must be built with -fsanitize=address"
#endif

extern "C" void __asan_init() __attribute__((weak));

namespace garuda {
namespace ipc {
namespace {

using ipc_test::EchoReply;
using ipc_test::EchoRequest;

constexpr uint64_t kSeed = 20261129;
constexpr int kInputs = 100000;

bool Allowed(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kInvalidArgument:
      return true;
    default:
      return false;
  }
}

class Generator {
 public:
  explicit Generator(uint64_t seed) : random_(seed) {}

  uint32_t Below(uint32_t n) {
    return std::uniform_int_distribution<uint32_t>(0, n - 1)(random_);
  }

  std::string RandomBytes(size_t max) {
    std::string out(Below(max + 1), '\0');
    for (char& c : out) c = static_cast<char>(Below(256));
    return out;
  }

  // Proto3 strings must be UTF-8: printable ASCII.
  std::string RandomText(size_t max) {
    std::string out(Below(max + 1), '\0');
    for (char& c : out) c = static_cast<char>(' ' + Below(95));
    return out;
  }

  EchoRequest RandomRequest(uint64_t seq) {
    EchoRequest request;
    request.set_seq(seq);
    switch (Below(5)) {
      case 0:
        request.mutable_open();
        break;
      case 1:
        request.mutable_echo()->set_text(RandomText(40));
        break;
      case 2:
        request.mutable_write_to_fd()->set_text(RandomText(8));
        break;
      case 3:
        request.mutable_close();
        break;
      default:
        break;  // No verb.
    }
    return request;
  }

  // One to four valid frames, then mutated.
  std::string MutatedFrames() {
    std::string bytes;
    int frames = 1 + Below(4);
    for (int i = 0; i < frames; ++i) bytes += Frame(RandomRequest(i + 1));
    int mutations = 1 + Below(4);
    for (int i = 0; i < mutations; ++i) {
      switch (Below(6)) {
        case 0:  // Flip a bit.
          if (!bytes.empty()) bytes[Below(bytes.size())] ^= 1 << Below(8);
          break;
        case 1:  // Set a byte.
          if (!bytes.empty()) {
            bytes[Below(bytes.size())] = static_cast<char>(Below(256));
          }
          break;
        case 2:  // Cut the end.
          bytes.resize(Below(bytes.size() + 1));
          break;
        case 3:  // Insert random bytes.
          bytes.insert(Below(bytes.size() + 1), RandomBytes(6));
          break;
        case 4:  // Rewrite the first length to anything.
          if (bytes.size() >= 4) {
            uint32_t length = Below(3) == 0 ? 0xffffffffu - Below(16)
                                            : Below(bytes.size() * 2 + 8);
            bytes.replace(0, 4, LengthPrefix(length));
          }
          break;
        default:  // Duplicate a chunk.
          if (!bytes.empty()) {
            size_t at = Below(bytes.size());
            bytes.insert(at, bytes.substr(at, Below(8)));
          }
          break;
      }
    }
    return bytes;
  }

 private:
  std::mt19937_64 random_;
};

// Writes `bytes` into a fresh socketpair (descriptors riding on the first
// byte, or on a later chunk) and shuts down writing on the writing end,
// which it leaves in *writer (so that replies have somewhere to go).
// Returns the reading end.
UniqueFd Feed(Generator& gen, const std::string& bytes, int spare_fd,
              UniqueFd* writer) {
  auto pair = MakeSocketPair();
  EXPECT_TRUE(pair.ok());
  std::vector<int> fds;
  if (gen.Below(4) == 0) fds.assign(gen.Below(8), spare_fd);
  size_t split = bytes.empty() ? 0 : gen.Below(bytes.size() + 1);
  bool fds_later = gen.Below(3) == 0 && split > 0 && split < bytes.size();
  if (fds_later) {
    EXPECT_TRUE(SendRaw(pair->first.get(), bytes.substr(0, split)).ok());
    EXPECT_TRUE(SendRaw(pair->first.get(), bytes.substr(split), fds).ok());
  } else if (!bytes.empty()) {
    EXPECT_TRUE(SendRaw(pair->first.get(), bytes, fds).ok());
  }
  EXPECT_EQ(::shutdown(pair->first.get(), SHUT_WR), 0);
  *writer = std::move(pair->first);
  return std::move(pair->second);
}

// A mutated string field that is not UTF-8 makes protobuf log an error
// before the parse fails; thousands of them would only fill the test log.
class QuietProtobuf : public ::testing::Environment {
 public:
  void SetUp() override { google::protobuf::SetLogHandler(nullptr); }
};
const auto* const kQuiet =
    ::testing::AddGlobalTestEnvironment(new QuietProtobuf);

TEST(ChannelFuzzTest, RunsUnderAddressSanitizer) {
  EXPECT_NE(&__asan_init, nullptr);
  auto maps = ReadFileToString("/proc/self/maps");
  ASSERT_TRUE(maps.ok());
  EXPECT_NE(maps->find("libasan"), std::string::npos)
      << "libasan is not mapped into the test";
  // And it does catch a read one byte past a heap buffer.
  EXPECT_DEATH(
      {
        char* buffer = new char[4];
        volatile char past = buffer[4];
        (void)past;
        delete[] buffer;
      },
      "heap-buffer-overflow");
}

// The reader, reading each frame exactly or (read_ahead) reading ahead.
void FuzzTheReader(bool read_ahead) {
  Generator gen(kSeed);
  UniqueFd spare(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(spare.valid());
  std::vector<int> fds_before = OpenFds();
  int outcomes[32] = {};
  int frames_read = 0;
  for (int i = 0; i < kInputs; ++i) {
    std::string bytes =
        gen.Below(2) == 0 ? gen.RandomBytes(64) : gen.MutatedFrames();
    ChannelOptions options;
    options.peer_name = "fuzz";
    options.max_frame_bytes = gen.Below(2) == 0 ? 1 << 20 : gen.Below(200);
    options.max_fds_per_frame = gen.Below(6);
    options.read_ahead = read_ahead;
    UniqueFd writer;
    Channel channel(Feed(gen, bytes, spare.get(), &writer), options);
    absl::Status status;
    // Each frame takes at least 4 bytes, so this many reads end it.
    for (size_t reads = 0; reads <= bytes.size() / 4 + 1; ++reads) {
      EchoRequest request;
      std::vector<UniqueFd> fds;
      status = channel.Receive(&request, gen.Below(2) ? &fds : nullptr);
      if (!status.ok()) break;
      ++frames_read;
      EXPECT_LE(fds.size(), static_cast<size_t>(options.max_fds_per_frame));
    }
    ASSERT_FALSE(status.ok()) << "input " << i << " did not end";
    ASSERT_TRUE(Allowed(status.code())) << "input " << i << ": " << status;
    ++outcomes[static_cast<int>(status.code())];
    if (!absl::IsOutOfRange(status)) {
      ASSERT_FALSE(channel.status().ok()) << "input " << i;
    }
  }
  EXPECT_EQ(OpenFds(), fds_before) << "descriptors leaked";
  std::cout << kInputs << " inputs (seed " << kSeed << "), " << frames_read
            << " frames read; ended by:";
  for (int code = 0; code < 32; ++code) {
    if (outcomes[code] == 0) continue;
    std::cout << " "
              << absl::StatusCodeToString(static_cast<absl::StatusCode>(code))
              << "=" << outcomes[code];
  }
  std::cout << "\n";
  // The inputs reach every outcome (a generator that only made garbage
  // would test nothing).
  EXPECT_GT(frames_read, 1000);
  for (absl::StatusCode code :
       {absl::StatusCode::kOutOfRange, absl::StatusCode::kResourceExhausted,
        absl::StatusCode::kDataLoss, absl::StatusCode::kInvalidArgument}) {
    EXPECT_GT(outcomes[static_cast<int>(code)], 100)
        << absl::StatusCodeToString(code);
  }
}

TEST(ChannelFuzzTest, RandomInputsNeverCrashTheReader) {
  FuzzTheReader(/*read_ahead=*/false);
}

TEST(ChannelFuzzTest, RandomInputsNeverCrashTheReadAheadReader) {
  FuzzTheReader(/*read_ahead=*/true);
}

TEST(ChannelFuzzTest, RandomInputsNeverCrashTheDispatcher) {
  Generator gen(kSeed + 1);
  UniqueFd spare(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(spare.valid());
  std::vector<int> fds_before = OpenFds();
  using Fds = std::vector<UniqueFd>;
  auto ok = [](const EchoRequest&, Fds&, EchoReply*) {
    return absl::OkStatus();
  };
  int served_ok = 0;
  for (int i = 0; i < kInputs / 10; ++i) {
    std::string bytes = gen.MutatedFrames();
    UniqueFd writer;
    Channel channel(Feed(gen, bytes, spare.get(), &writer));
    Dispatcher<EchoRequest, EchoReply> dispatcher;
    dispatcher.On(EchoRequest::kOpen, {0}, ok, 1)
        .On(EchoRequest::kEcho, {1}, ok)
        .On(EchoRequest::kWriteToFd, {1},
            [](const EchoRequest&, Fds& fds, EchoReply*) {
              if (!fds.empty()) UniqueFd taken = std::move(fds[0]);
              return absl::OkStatus();
            })
        .On(EchoRequest::kClose, {1}, ok, 2);
    absl::Status status = dispatcher.Serve(channel);
    if (status.ok()) ++served_ok;
    if (!status.ok()) {
      ASSERT_TRUE(Allowed(status.code()) ||
                  status.code() == absl::StatusCode::kFailedPrecondition)
          << "input " << i << ": " << status;
      EXPECT_EQ(channel.fd(), -1) << "a protocol error closes the channel";
    }
  }
  EXPECT_EQ(OpenFds(), fds_before) << "descriptors leaked";
  EXPECT_GT(served_ok, 10);
}

}  // namespace
}  // namespace ipc
}  // namespace garuda
