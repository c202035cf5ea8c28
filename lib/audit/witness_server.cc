#include "lib/audit/witness_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/audit/paths.h"
#include "lib/audit/signing_key.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/sha256.h"
#include "lib/base/status_macros.h"

namespace garuda {
namespace {

constexpr size_t kMaxProofLines = 63;  // the spec's limit

WitnessAnswer Answer(int status, std::string body) {
  WitnessAnswer answer;
  answer.status = status;
  answer.body = std::move(body);
  if (!answer.body.empty() && answer.body.back() != '\n') answer.body += "\n";
  return answer;
}

bool ParseDecimal(absl::string_view text, uint64_t* value) {
  if (text.empty() || text.size() > 20 || (text.size() > 1 && text[0] == '0')) {
    return false;
  }
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return absl::SimpleAtoi(text, value);
}

// Holds an flock on a per-origin lock file (never renamed, so every
// request of the origin, in any thread or process, locks the same inode).
class OriginLock {
 public:
  static absl::StatusOr<OriginLock> Take(const std::string& path) {
    ASSIGN_OR_RETURN(
        UniqueFd fd,
        OpenFile(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    while (::flock(fd.get(), LOCK_EX) != 0) {
      if (errno != EINTR)
        return LastErrnoStatus(absl::StrCat("flock(", path, ")"));
    }
    return OriginLock(std::move(fd));
  }

 private:
  explicit OriginLock(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;  // closing it releases the lock
};

}  // namespace

Witness::Witness(std::shared_ptr<const NoteSigner> key,
                 std::vector<NoteVerifier> logs, std::string state_folder,
                 std::function<uint64_t()> clock)
    : key_(std::move(key)),
      logs_(std::move(logs)),
      state_folder_(std::move(state_folder)),
      clock_(std::move(clock)) {}

std::string Witness::CosignerKey() const {
  return FormatNoteVerifier(VerifierOf(*key_, kNoteCosignatureV1));
}

WitnessAnswer Witness::AddCheckpoint(absl::string_view body) const {
  // 1. The request's syntax: "old N", proof lines, a blank line, a note.
  size_t blank = body.find("\n\n");
  if (blank == absl::string_view::npos) {
    return Answer(400, "no blank line after the old size and the proof");
  }
  std::vector<absl::string_view> head =
      absl::StrSplit(body.substr(0, blank), '\n');
  absl::string_view old_line = head[0];
  uint64_t old_size = 0;
  if (!absl::ConsumePrefix(&old_line, "old ") ||
      !ParseDecimal(old_line, &old_size)) {
    return Answer(400, "the first line is not \"old <size>\"");
  }
  if (head.size() - 1 > kMaxProofLines) {
    return Answer(400, "more than 63 proof lines");
  }
  std::vector<MerkleHash> proof;
  for (size_t i = 1; i < head.size(); ++i) {
    absl::StatusOr<std::string> bytes = Base64Decode(head[i]);
    if (!bytes.ok() || bytes->size() != 32) {
      return Answer(400,
                    absl::StrCat("proof line ", i, " is not a base64 hash"));
    }
    proof.push_back(*HashFromBytes(*bytes));
  }
  absl::StatusOr<Note> note = ParseNote(body.substr(blank + 2));
  if (!note.ok()) return Answer(400, std::string(note.status().message()));
  absl::StatusOr<Checkpoint> checkpoint = ParseCheckpoint(note->text);
  if (!checkpoint.ok()) {
    return Answer(400, std::string(checkpoint.status().message()));
  }

  // 2. Whose log: an origin that begins with a --log key's name and "/".
  std::vector<const NoteVerifier*> keys;
  for (const NoteVerifier& log : logs_) {
    if (absl::StartsWith(checkpoint->origin, absl::StrCat(log.name, "/"))) {
      keys.push_back(&log);
    }
  }
  if (keys.empty()) return Answer(404, "unknown log origin");
  bool signed_by_log = false;
  for (const NoteVerifier* key : keys) {
    if (VerifyNoteSignature(*note, *key).ok()) signed_by_log = true;
  }
  if (!signed_by_log) {
    return Answer(403, "no signature by a known key of this log verifies");
  }
  if (old_size > checkpoint->size) {
    return Answer(400, "the old size is larger than the checkpoint's size");
  }

  // 3. Under the origin's lock: compare with what was cosigned, save, sign.
  const std::string name = Sha256Hex(checkpoint->origin).substr(0, 32);
  const std::string state_path = JoinPath(state_folder_, name + ".checkpoint");
  absl::StatusOr<OriginLock> lock =
      OriginLock::Take(JoinPath(state_folder_, name + ".lock"));
  if (!lock.ok()) return Answer(500, "the witness cannot lock its state");
  uint64_t held_size = 0;
  MerkleHash held_root = MerkleEmptyTreeHash();
  {
    RegularFileOptions options;
    options.max_bytes = kMaxNoteBytes;
    absl::StatusOr<std::string> held = ReadRegularFile(state_path, options);
    if (held.ok()) {
      absl::StatusOr<Checkpoint> parsed = ParseCheckpoint(*held);
      if (!parsed.ok() || parsed->origin != checkpoint->origin) {
        return Answer(500, "the witness's state for this origin is damaged");
      }
      held_size = parsed->size;
      held_root = parsed->root;
    } else if (!absl::IsNotFound(held.status())) {
      return Answer(500, "the witness cannot read its state");
    }
  }
  if (old_size != held_size) {
    WitnessAnswer answer = Answer(409, absl::StrCat(held_size));
    answer.content_type = "text/x.tlog.size";
    return answer;
  }
  if (old_size == checkpoint->size && held_root != checkpoint->root) {
    // A fork: another tree of the size already cosigned.
    WitnessAnswer answer = Answer(409, absl::StrCat(held_size));
    answer.content_type = "text/x.tlog.size";
    return answer;
  }
  if (!VerifyConsistency(old_size, checkpoint->size, proof, held_root,
                         checkpoint->root)
           .ok()) {
    return Answer(422, "the consistency proof does not verify");
  }
  // Saved before the answer: a crash after it cannot roll the witness back.
  absl::Status saved = WriteFileAtomically(state_path, note->text, 0600);
  if (!saved.ok()) return Answer(500, "the witness cannot save its state");
  absl::StatusOr<std::string> line =
      CosignNoteLine(note->text, *key_, clock_());
  if (!line.ok()) return Answer(500, "the witness cannot sign");
  return Answer(200, *line);
}

absl::StatusOr<UniqueFd> ListenOn(const std::string& host_port, int* port) {
  size_t colon = host_port.rfind(':');
  int wanted = 0;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(host_port.substr(colon + 1), &wanted) || wanted < 0 ||
      wanted > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--listen \"", host_port, "\": give HOST:PORT"));
  }
  std::string host = host_port.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  struct sockaddr_storage address = {};
  socklen_t length;
  int family;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
  if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    family = v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(wanted));
    length = sizeof(*v4);
  } else if (::inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    family = v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(wanted));
    length = sizeof(*v6);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--listen \"", host_port,
                     "\": the host must be a numeric address "
                     "(127.0.0.1, ::1)"));
  }
  UniqueFd fd(::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return LastErrnoStatus("socket");
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), length) != 0) {
    return LastErrnoStatus(absl::StrCat("bind(", host_port, ")"));
  }
  if (::listen(fd.get(), 128) != 0) return LastErrnoStatus("listen");
  struct sockaddr_storage bound = {};
  socklen_t bound_length = sizeof(bound);
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &bound_length);
  *port = ntohs(family == AF_INET
                    ? reinterpret_cast<sockaddr_in*>(&bound)->sin_port
                    : reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  return fd;
}

absl::StatusOr<OpenedWitness> OpenWitness(const WitnessServeOptions& options) {
  if (options.listen.empty() || options.key_file.empty() ||
      options.state_folder.empty() || options.log_keys.empty()) {
    return absl::InvalidArgumentError(
        "--listen HOST:PORT, --key FILE, --state DIR and at least one --log "
        "VKEY are required");
  }
  std::vector<NoteVerifier> logs;
  for (const std::string& text : options.log_keys) {
    absl::StatusOr<NoteVerifier> key = ParseNoteVerifier(text);
    if (!key.ok() || key->type != kNoteEd25519) {
      return absl::InvalidArgumentError(
          absl::StrCat("--log \"", text, "\": ",
                       key.ok() ? "not a log's note key (type 0x01)"
                                : key.status().message()));
    }
    logs.push_back(*key);
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const NoteSigner> key,
                   ReadSigningKey(options.key_file));
  RETURN_IF_ERROR(MakePrivateFolder(options.state_folder));
  OpenedWitness opened;
  ASSIGN_OR_RETURN(opened.listener, ListenOn(options.listen, &opened.port));
  if (!options.port_file.empty()) {
    RETURN_IF_ERROR(WriteFileAtomically(options.port_file,
                                        absl::StrCat(opened.port, "\n"), 0644));
  }
  opened.witness = std::make_unique<Witness>(
      std::move(key), std::move(logs), options.state_folder,
      [] { return static_cast<uint64_t>(::time(nullptr)); });
  return opened;
}

namespace {

struct Connection {
  UniqueFd fd;
  const Witness* witness;
  HttpLimits limits;
  std::atomic<int>* open;
};

void ServeConnection(Connection* connection) {
  std::unique_ptr<Connection> owned(connection);
  const int fd = connection->fd.get();
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  std::string pending;
  for (;;) {
    HttpRequest request;
    HttpError error;
    if (!ReadHttpRequest(fd, connection->limits, &pending, &request, &error)) {
      if (error.status != 0) {
        WriteHttpResponse(fd, error.status, "text/plain; charset=utf-8",
                          error.reason + "\n", /*close=*/true);
      }
      break;
    }
    WitnessAnswer answer;
    if (request.target != "/add-checkpoint") {
      answer = Answer(404, "not found");
    } else if (request.method != "POST") {
      answer = Answer(405, "use POST");
    } else {
      answer = connection->witness->AddCheckpoint(request.body);
    }
    if (!WriteHttpResponse(fd, answer.status, answer.content_type, answer.body,
                           !request.keep_alive) ||
        !request.keep_alive) {
      break;
    }
  }
  connection->open->fetch_sub(1);
}

}  // namespace

void ServeWitnessHttp(int listener, const Witness& witness,
                      const HttpLimits& limits, int max_connections,
                      const std::atomic<bool>* stop) {
  std::atomic<int> open{0};
  while (stop == nullptr || !stop->load()) {
    struct pollfd poll_fd = {listener, POLLIN, 0};
    if (::poll(&poll_fd, 1, 200) <= 0) continue;
    int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;  // a peer gone before the accept, EMFILE...
    UniqueFd client(fd);
    if (open.load() >= max_connections) {
      WriteHttpResponse(client.get(), 503, "text/plain; charset=utf-8",
                        "too many connections\n", true);
      continue;
    }
    open.fetch_add(1);
    auto* connection =
        new Connection{std::move(client), &witness, limits, &open};
    pthread_t thread;
    // A thread that cannot be made (the process limit) loses its
    // connection, not the server.
    if (::pthread_create(
            &thread, nullptr,
            [](void* arg) -> void* {
              ServeConnection(static_cast<Connection*>(arg));
              return nullptr;
            },
            connection) != 0) {
      open.fetch_sub(1);
      delete connection;
      continue;
    }
    ::pthread_detach(thread);
  }
  // Tests stop the server: wait for the connections still being served.
  while (open.load() > 0) ::usleep(1000);
}

}  // namespace garuda
