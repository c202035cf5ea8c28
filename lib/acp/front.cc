#include "lib/acp/front.h"

#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "lib/acp/json_rpc.h"
#include "lib/acp/launcher.h"
#include "lib/acp/worker_channel.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/base/version.h"

namespace garuda {
namespace acp {
namespace {

// How long the front waits at the end for its workers to end their
// sessions (stop the helpers, close the audit log).
constexpr absl::Duration kEndWait = absl::Seconds(20);

// Sessions open at once on one connection.
constexpr size_t kMaxSessions = 16;

void Log(absl::string_view line) {
  std::cerr << "garuda-agent acp: " << line << "\n";
}

// A session id as the journal takes it (lib/agent/journal.h).
bool ValidSessionId(const std::string& id) {
  if (id.empty() || id.size() > 128 || id == "." || id == "..") return false;
  for (char c : id) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' &&
        c != '_' && c != '-') {
      return false;
    }
  }
  return true;
}

struct Worker {
  UniqueFd fd;
  std::unique_ptr<LineReader> reader;
  std::string session_id;  // "" until session/new is answered
  bool open = false;       // answered its session/new or session/load
};

// The requests forwarded under an id of ours, one direction: our id ->
// (the worker's key, the id the asker gave).
class PendingRequests {
 public:
  explicit PendingRequests(int* next_id) : next_id_(next_id) {}

  // Our id for the request `asker_id` of (or to) worker `key`.
  int Add(int key, Value asker_id) {
    const int id = (*next_id_)++;
    pending_[id] = {key, std::move(asker_id)};
    return id;
  }
  // The asker's id and the worker's key of our request `id`, forgotten;
  // nullopt when there is none.
  std::optional<std::pair<int, Value>> Take(int id) {
    auto it = pending_.find(id);
    if (it == pending_.end()) return std::nullopt;
    std::pair<int, Value> found = std::move(it->second);
    pending_.erase(it);
    return found;
  }
  // The same, only when it is worker `key`'s.
  std::optional<Value> Take(int id, int key) {
    auto it = pending_.find(id);
    if (it == pending_.end() || it->second.first != key) return std::nullopt;
    return Take(id)->second;
  }
  // The askers' ids of every request of worker `key`, forgotten.
  std::vector<Value> TakeAllOf(int key) {
    std::vector<Value> ids;
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second.first != key) {
        ++it;
        continue;
      }
      ids.push_back(std::move(it->second.second));
      it = pending_.erase(it);
    }
    return ids;
  }

 private:
  int* next_id_;
  std::map<int, std::pair<int, Value>> pending_;
};

// The answer to initialize: what this agent can do.
Value InitializeResult() {
  Value result = Object();
  Set(result, "protocolVersion", Num(kProtocolVersion));
  Value capabilities = Object();
  Set(capabilities, "loadSession", Bool(true));
  Value prompt = Object();
  Set(prompt, "image", Bool(false));
  Set(prompt, "audio", Bool(false));
  Set(prompt, "embeddedContext", Bool(true));
  Set(capabilities, "promptCapabilities", std::move(prompt));
  Value mcp = Object();
  Set(mcp, "http", Bool(true));
  Set(mcp, "sse", Bool(false));
  Set(capabilities, "mcpCapabilities", std::move(mcp));
  Set(result, "agentCapabilities", std::move(capabilities));
  Value info = Object();
  Set(info, "name", Str("garuda-agent"));
  Set(info, "title", Str("Garuda"));
  Set(info, "version", Str(kGarudaVersion));
  Set(result, "agentInfo", std::move(info));
  Set(result, "authMethods", List());
  return result;
}

// The row of `method` in a method table, or null.
template <typename Row, size_t N>
const Row* FindRow(const Row (&rows)[N], const std::string& method) {
  for (const Row& row : rows) {
    if (method == row.method) return &row;
  }
  return nullptr;
}

// At the editor's end: each worker is told (end of file on its socket)
// and ends its session; its socket closes when it has. Waits for that, up
// to kEndWait, so that an editor that ends the process group after the
// front exits does not cut a session's last audit and journal lines.
void EndWorkers(const std::vector<int>& fds) {
  std::vector<pollfd> open;
  for (int fd : fds) {
    ::shutdown(fd, SHUT_WR);
    open.push_back({fd, POLLIN, 0});
  }
  const absl::Time deadline = absl::Now() + kEndWait;
  char discard[4096];
  while (!open.empty()) {
    const int left =
        static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    if (left <= 0) {
      Log("a session worker did not end in time; leaving it to end alone");
      return;
    }
    if (::poll(open.data(), open.size(), left) < 0 && errno != EINTR) return;
    for (size_t i = 0; i < open.size();) {
      if (open[i].revents != 0 &&
          ::read(open[i].fd, discard, sizeof(discard)) <= 0) {
        open.erase(open.begin() + i);
      } else {
        open[i].revents = 0;
        ++i;
      }
    }
  }
}

class Front {
 public:
  Front(const FrontOptions& options, WorkerStarter start_worker)
      : options_(options), start_worker_(std::move(start_worker)) {}

  int Serve() {
    LineReader client(options_.in_fd);
    while (true) {
      std::vector<pollfd> fds;
      fds.push_back({options_.in_fd, POLLIN, 0});
      std::vector<int> keys;
      for (auto& [key, worker] : workers_) {
        fds.push_back({worker.fd.get(), POLLIN, 0});
        keys.push_back(key);
      }
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        Log(absl::StrCat("poll: ", std::strerror(errno)));
        return 1;
      }
      if (fds[0].revents != 0) {
        absl::StatusOr<bool> more = client.Fill();
        while (std::optional<LineReader::Line> line = client.Next()) {
          FromClient(*line);
        }
        if (!more.ok() || !*more) {  // the editor has gone
          std::vector<int> fds;
          for (auto& [key, worker] : workers_) fds.push_back(worker.fd.get());
          EndWorkers(fds);
          return 0;
        }
      }
      for (size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        auto it = workers_.find(keys[i - 1]);
        if (it == workers_.end()) continue;
        absl::StatusOr<bool> more = it->second.reader->Fill();
        bool dropped = false;
        while (std::optional<LineReader::Line> line =
                   it->second.reader->Next()) {
          if (!FromWorker(it->first, *line)) {
            dropped = true;
            break;
          }
        }
        if (!dropped && (!more.ok() || !*more)) {
          DropWorker(it->first,
                     "its session ended (see the log on standard "
                     "error)");
        }
      }
    }
  }

 private:
  void ToClient(const std::string& line) {
    WriteAll(options_.out_fd, line).IgnoreError();
  }
  void Error(const Value& id, int code, absl::string_view message) {
    ToClient(ErrorLine(id, {code, std::string(message)}));
  }

  void FromClient(const LineReader::Line& line) {
    if (line.too_long) {
      Error(Null(), kInvalidRequest,
            absl::StrCat("a message of ", line.bytes, " bytes is over the ",
                         kMaxLineBytes, "-byte limit; it was not read"));
      return;
    }
    Parsed parsed = ParseMessage(line.text);
    if (!parsed.message) {
      Error(parsed.id, parsed.error.code, parsed.error.message);
      return;
    }
    Message& message = *parsed.message;
    switch (message.kind) {
      case Message::Kind::kResponse:
        return ClientResponse(message);
      case Message::Kind::kNotification:
        return ClientNotification(message);
      case Message::Kind::kRequest:
        return ClientRequest(message);
    }
  }

  // The client's methods, one row each: the method, whether its
  // parameters name a session of this connection ("sessionId", looked up
  // before the handler runs), and the handler. Any other request is
  // METHOD_NOT_FOUND; any other notification is logged and ignored.
  struct MethodRow {
    const char* method;
    bool names_session;
    // `worker`: the session's worker when names_session, else -1.
    void (Front::*handler)(const Message& message, int worker);
  };

  void ClientRequest(const Message& request) {
    static constexpr MethodRow kRequests[] = {
        {"initialize", false, &Front::Initialize},
        {"authenticate", false, &Front::Authenticate},
        {"session/new", false, &Front::OpenSession},
        {"session/load", false, &Front::OpenSession},
        {"session/prompt", true, &Front::Forward},
    };
    const MethodRow* row = FindRow(kRequests, request.method);
    if (row == nullptr) {
      Error(
          request.id, kMethodNotFound,
          absl::StrCat("garuda-agent has no method \"", request.method, "\""));
      return;
    }
    int worker = -1;
    if (row->names_session) {
      std::string id = StringField(request.params, "sessionId").value_or("");
      auto session = sessions_.find(id);
      if (session == sessions_.end()) {
        Error(request.id, kInvalidParams,
              absl::StrCat("no session \"", id,
                           "\" on this connection (session/new or "
                           "session/load first)"));
        return;
      }
      worker = session->second;
    }
    (this->*row->handler)(request, worker);
  }

  void Authenticate(const Message& request, int) {
    ToClient(ResultLine(request.id, Object()));
  }

  void Initialize(const Message& request, int) {
    ToClient(ResultLine(request.id, InitializeResult()));
  }

  void OpenSession(const Message& request, int) {
    const bool load = request.method == "session/load";
    std::optional<std::string> cwd = StringField(request.params, "cwd");
    if (!cwd || cwd->empty() || (*cwd)[0] != '/') {
      Error(request.id, kInvalidParams,
            absl::StrCat(request.method,
                         ": \"cwd\" must be the project's absolute path"));
      return;
    }
    if (const Value* servers = Field(request.params, "mcpServers");
        servers != nullptr && servers->kind_case() != Value::kListValue &&
        servers->kind_case() != Value::kNullValue) {
      Error(request.id, kInvalidParams,
            absl::StrCat(request.method, ": \"mcpServers\" must be a list"));
      return;
    }
    std::string session_id;
    if (load) {
      session_id = StringField(request.params, "sessionId").value_or("");
      if (!ValidSessionId(session_id)) {
        Error(request.id, kInvalidParams,
              "session/load: \"sessionId\" must be a Garuda session id "
              "(letters, digits, '.', '_', '-')");
        return;
      }
      if (sessions_.count(session_id) != 0) {
        Error(request.id, kInvalidRequest,
              absl::StrCat("session ", session_id,
                           " is open on this connection already"));
        return;
      }
    }
    if (workers_.size() >= kMaxSessions) {
      // Each session is five processes (the worker and its helpers).
      Error(request.id, kInvalidRequest,
            absl::StrCat("this connection has ", kMaxSessions,
                         " open sessions, the most it keeps; open a new "
                         "connection (restart the agent) for more"));
      return;
    }
    absl::StatusOr<UniqueFd> fd = start_worker_();
    if (!fd.ok()) {
      Error(request.id, kInternalError, fd.status().message());
      return;
    }
    const int key = next_worker_++;
    Worker& worker = workers_[key];
    worker.reader = std::make_unique<LineReader>(fd->get(), kMaxRelayLineBytes);
    worker.fd = *std::move(fd);
    worker.session_id = session_id;
    if (load) sessions_[session_id] = key;
    Forward(request, key);
  }

  // A request of the editor to a worker, under an id of ours.
  void Forward(const Message& request, int key) {
    const int id = to_worker_.Add(key, request.id);
    Value params = request.params;
    std::string line = RequestLine(Num(id), request.method, params);
    if (!WriteAll(workers_[key].fd.get(), line).ok()) {
      DropWorker(key, "its session ended (see the log on standard error)");
    }
  }

  void ClientNotification(const Message& notification) {
    static constexpr MethodRow kNotifications[] = {
        {"session/cancel", true, &Front::Cancel},
    };
    const MethodRow* row = FindRow(kNotifications, notification.method);
    if (row == nullptr) {
      Log(absl::StrCat("ignored the notification ", notification.method));
      return;
    }
    if (!row->names_session) return (this->*row->handler)(notification, -1);
    std::string id = StringField(notification.params, "sessionId").value_or("");
    auto session = sessions_.find(id);
    if (session == sessions_.end()) {
      Log(absl::StrCat(notification.method, " of an unknown session \"", id,
                       "\""));
      return;
    }
    (this->*row->handler)(notification, session->second);
  }

  void Cancel(const Message& notification, int worker) {
    WriteAll(workers_[worker].fd.get(),
             NotificationLine(notification.method, notification.params))
        .IgnoreError();
  }

  void ClientResponse(const Message& response) {
    if (response.id.kind_case() != Value::kNumberValue) {
      Log("a response to no request of ours");
      return;
    }
    std::optional<std::pair<int, Value>> asked =
        to_client_.Take(static_cast<int>(response.id.number_value()));
    if (!asked) {
      Log("a response to no request of ours");
      return;
    }
    auto [key, worker_id] = *std::move(asked);
    auto worker = workers_.find(key);
    if (worker == workers_.end()) return;
    std::string line = response.error ? ErrorLine(worker_id, *response.error)
                                      : ResultLine(worker_id, response.result);
    WriteAll(worker->second.fd.get(), line).IgnoreError();
  }

  // One line of a worker. False when the worker broke the protocol and was
  // dropped: a worker parses the model's output, so what it sends is
  // checked as coming from outside.
  bool FromWorker(int key, const LineReader::Line& line) {
    Worker& worker = workers_[key];
    absl::StatusOr<WorkerMessage> parsed = ParseFromWorker(line);
    if (!parsed.ok()) {
      DropWorker(key,
                 absl::StrCat("its worker sent ", parsed.status().message()));
      return false;
    }
    Message& message = parsed->message;
    if (parsed->verb == FromWorkerVerb::kResponse) {
      if (message.id.kind_case() != Value::kNumberValue) {
        DropWorker(key, "its worker answered no request");
        return false;
      }
      std::optional<Value> client_id =
          to_worker_.Take(static_cast<int>(message.id.number_value()), key);
      if (!client_id) {
        DropWorker(key, "its worker answered no request");
        return false;
      }
      if (!worker.open) {
        // The answer to session/new or session/load.
        if (message.error) {
          ToClient(ErrorLine(*client_id, *message.error));
          DropWorker(key, "");
          return false;
        }
        if (worker.session_id.empty()) {
          std::string id =
              StringField(message.result, "sessionId").value_or("");
          if (!ValidSessionId(id) || sessions_.count(id) != 0) {
            Error(*client_id, kInternalError,
                  "the session worker gave no usable session id");
            DropWorker(key, "");
            return false;
          }
          worker.session_id = id;
          sessions_[id] = key;
        }
        worker.open = true;
      }
      ToClient(message.error ? ErrorLine(*client_id, *message.error)
                             : ResultLine(*client_id, message.result));
      return true;
    }
    if (!worker.open && worker.session_id.empty()) {
      // Before session/new is answered the id is unknown: nothing may go
      // out under it.
      DropWorker(key, "its worker spoke before its session was open");
      return false;
    }
    if (parsed->session_id != worker.session_id) {
      DropWorker(key, "its worker spoke for another session");
      return false;
    }
    switch (parsed->verb) {
      case FromWorkerVerb::kSessionUpdate:
        ToClient(NotificationLine(message.method, message.params));
        return true;
      case FromWorkerVerb::kRequestPermission: {
        const int id = to_client_.Add(key, message.id);
        ToClient(RequestLine(Num(id), message.method, message.params));
        return true;
      }
      case FromWorkerVerb::kResponse:
        break;  // answered above
    }
    return true;
  }

  // Ends a worker's session (its socket closed: the worker ends it), and
  // answers the editor's requests it still had.
  void DropWorker(int key, absl::string_view why) {
    auto it = workers_.find(key);
    if (it == workers_.end()) return;
    const std::string session = it->second.session_id;
    if (!why.empty()) {
      Log(absl::StrCat("session ", session.empty() ? "(new)" : session, ": ",
                       why));
    }
    for (const Value& editor_id : to_worker_.TakeAllOf(key)) {
      Error(editor_id, kInternalError,
            absl::StrCat("the session ended: ",
                         why.empty() ? "its worker stopped" : why));
    }
    to_client_.TakeAllOf(key);
    if (!session.empty()) {
      auto named = sessions_.find(session);
      if (named != sessions_.end() && named->second == key) {
        sessions_.erase(named);
      }
    }
    workers_.erase(it);
  }

  const FrontOptions& options_;
  WorkerStarter start_worker_;
  std::map<int, Worker> workers_;
  std::map<std::string, int> sessions_;  // session id -> worker
  // Our ids are one sequence over both directions.
  int next_id_ = 1;
  // Our requests to workers, each for a request of the editor's.
  PendingRequests to_worker_{&next_id_};
  // Our requests to the editor, each for a request of a worker's.
  PendingRequests to_client_{&next_id_};
  int next_worker_ = 1;
};

}  // namespace

void LogFront(absl::string_view line) { Log(line); }

int ServeFront(const FrontOptions& options, WorkerStarter start_worker) {
  // A closed editor or worker is an error of the write, not the end.
  ::signal(SIGPIPE, SIG_IGN);
  Front front(options, std::move(start_worker));
  return front.Serve();
}

}  // namespace acp
}  // namespace garuda
