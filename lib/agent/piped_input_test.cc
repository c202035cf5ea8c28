#include "lib/agent/piped_input.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"

namespace garuda {
namespace agent {
namespace {

// A socket is not piped input: nothing is read (the read would wait for a
// writer that may never end). The control: the same bytes in a pipe are.
TEST(PipedInputTest, OnlyPipesAndFilesAreRead) {
  int sockets[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets), 0);
  UniqueFd keep(sockets[1]), socket_end(sockets[0]);
  ASSERT_TRUE(WriteAll(sockets[1], "socket text\n").ok());
  absl::StatusOr<PipedPrompt> from_socket =
      AddPipedInput(socket_end.get(), "hi");
  ASSERT_TRUE(from_socket.ok()) << from_socket.status();
  EXPECT_EQ(from_socket->prompt, "hi");

  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  UniqueFd read_end(pipe_fds[0]);
  ASSERT_TRUE(WriteAll(pipe_fds[1], "piped text").ok());
  ::close(pipe_fds[1]);
  absl::StatusOr<PipedPrompt> from_pipe = AddPipedInput(read_end.get(), "hi");
  ASSERT_TRUE(from_pipe.ok()) << from_pipe.status();
  EXPECT_EQ(from_pipe->prompt,
            "hi\n\n<stdin bytes=\"10\">\npiped text\n</stdin>");
}

// Cut at the cap, the count of the rest is exact, and invalid UTF-8 (here a
// character cut in half by the cap) becomes U+FFFD.
TEST(PipedInputTest, CapAndInvalidUtf8) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  UniqueFd read_end(pipe_fds[0]);
  ASSERT_TRUE(WriteAll(pipe_fds[1], "abc\xc3\xa9zz").ok());  // "abcézz"
  ::close(pipe_fds[1]);
  absl::StatusOr<PipedPrompt> cut = AddPipedInput(read_end.get(), "p", 4);
  ASSERT_TRUE(cut.ok()) << cut.status();
  EXPECT_EQ(cut->input_bytes, 7u);
  EXPECT_EQ(cut->left_out_bytes, 3u);
  EXPECT_TRUE(absl::StrContains(cut->prompt, "abc\xef\xbf\xbd\n")) << cut->prompt;
  EXPECT_TRUE(absl::StrContains(cut->prompt, "cut at 4 bytes; 3 more"));
}

}  // namespace
}  // namespace agent
}  // namespace garuda
