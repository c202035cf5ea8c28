// One escape attempt per call, for the escape corpus: exit 0 when the
// attempt worked, 1 when the system refused it (with the error on stderr),
// 2 on a usage mistake. The same binary runs inside and outside a sandbox.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

int Refused(const char* what) {
  std::fprintf(stderr, "%s: %s\n", what, std::strerror(errno));
  return 1;
}

int Write(const char* path) {
  int fd = ::open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Refused("open");
  if (::write(fd, "escaped", 7) != 7) return Refused("write");
  ::close(fd);
  return 0;
}

int Read(const char* path) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Refused("open");
  char buffer[4096];
  ssize_t n = ::read(fd, buffer, sizeof buffer);
  if (n < 0) return Refused("read");
  ::fwrite(buffer, 1, n, stdout);
  return 0;
}

int HardLink(const char* from, const char* to) {
  if (::link(from, to) != 0) return Refused("link");
  return Write(to);
}

// Opening a process's memory for writing is the ptrace check (mode ATTACH)
// without a ptrace call.
int WriteMemory(const char* pid_text) {
  std::string path = std::string("/proc/") + pid_text + "/mem";
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return Refused("open /proc/PID/mem");
  ::close(fd);
  return 0;
}

int Ptrace(const char* pid_text) {
  pid_t pid = std::atoi(pid_text);
  if (::ptrace(PTRACE_SEIZE, pid, nullptr, nullptr) != 0) {
    return Refused("ptrace");
  }
  ::ptrace(PTRACE_DETACH, pid, nullptr, nullptr);
  return 0;
}

int Mount(const char* dir) {
  if (::mount("tmpfs", dir, "tmpfs", 0, nullptr) != 0) return Refused("mount");
  ::umount2(dir, MNT_DETACH);
  return 0;
}

int UserNamespace() {
  if (::unshare(CLONE_NEWUSER) != 0) return Refused("unshare");
  return 0;
}

// Pushes a character into the input of a terminal: a new pseudo-terminal
// that this process makes its controlling terminal (the host's terminal is
// not ours to spoil in a test).
int Tiocsti() {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();
    int master = ::posix_openpt(O_RDWR | O_CLOEXEC);
    if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) {
      ::_exit(Refused("posix_openpt"));
    }
    int slave = ::open(::ptsname(master), O_RDWR | O_CLOEXEC);
    if (slave < 0) ::_exit(Refused("open pts"));
    ::ioctl(slave, TIOCSCTTY, 0);
    char c = 'x';
    if (::ioctl(slave, TIOCSTI, &c) != 0) ::_exit(Refused("TIOCSTI"));
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int Connect(const char* port) {
  int sock = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0) return Refused("socket");
  struct sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_port = htons(std::atoi(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(sock, reinterpret_cast<sockaddr*>(&address), sizeof address) !=
      0) {
    return Refused("connect");
  }
  return 0;
}

// Opens the controlling terminal.
int OpenTty() {
  int fd = ::open("/dev/tty", O_RDWR | O_CLOEXEC);
  if (fd < 0) return Refused("open /dev/tty");
  ::close(fd);
  return 0;
}

// kill(0, SIGUSR1): the caller's whole process group. This process ignores
// the signal itself, so that it can report.
int KillGroup() {
  ::signal(SIGUSR1, SIG_IGN);
  if (::kill(0, SIGUSR1) != 0) return Refused("kill(0)");
  return 0;
}

// A file made with a set-id mode by `how` ("open", "tmpfile", "mknod"): 0
// when the file exists with the bit.
int SetIdFile(const char* how, const char* path, const char* mode_text) {
  mode_t mode = static_cast<mode_t>(std::strtoul(mode_text, nullptr, 8));
  std::string verb = how;
  if (verb == "open") {
    int fd = ::open(path, O_CREAT | O_WRONLY | O_CLOEXEC, mode);
    if (fd < 0) return Refused("open(O_CREAT)");
    ::close(fd);
  } else if (verb == "tmpfile") {
    std::string folder = path;
    folder = folder.substr(0, folder.rfind('/'));
    int fd = ::open(folder.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
    if (fd < 0) return Refused("open(O_TMPFILE)");
    std::string proc = "/proc/self/fd/" + std::to_string(fd);
    if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, path, AT_SYMLINK_FOLLOW) !=
        0) {
      return Refused("linkat");
    }
    ::close(fd);
  } else if (verb == "mknod") {
    if (::mknod(path, S_IFREG | mode, 0) != 0) return Refused("mknod");
  } else {
    return 2;
  }
  struct stat st;
  if (::stat(path, &st) != 0) return Refused("stat");
  if ((st.st_mode & (S_ISUID | S_ISGID)) == 0) {
    std::fprintf(stderr, "made without the set-id bits (mode %o)\n",
                 st.st_mode & 07777);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string verb = argc > 1 ? argv[1] : "";
  if (verb == "write" && argc == 3) return Write(argv[2]);
  if (verb == "read" && argc == 3) return Read(argv[2]);
  if (verb == "hardlink" && argc == 4) return HardLink(argv[2], argv[3]);
  if (verb == "ptrace" && argc == 3) return Ptrace(argv[2]);
  if (verb == "memory" && argc == 3) return WriteMemory(argv[2]);
  if (verb == "mount" && argc == 3) return Mount(argv[2]);
  if (verb == "userns" && argc == 2) return UserNamespace();
  if (verb == "tiocsti" && argc == 2) return Tiocsti();
  if (verb == "connect" && argc == 3) return Connect(argv[2]);
  if (verb == "tty" && argc == 2) return OpenTty();
  if (verb == "killgroup" && argc == 2) return KillGroup();
  if (verb == "setid" && argc == 5) return SetIdFile(argv[2], argv[3], argv[4]);
  std::fprintf(
      stderr,
      "usage: escape_helper write|read PATH | hardlink FROM TO | "
      "ptrace PID | memory PID | mount DIR | userns | tiocsti | "
      "connect PORT | tty | killgroup | setid open|tmpfile|mknod PATH MODE\n");
  return 2;
}
