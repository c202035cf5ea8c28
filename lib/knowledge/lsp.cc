#include "lib/knowledge/lsp.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/knowledge/render.h"

namespace garuda::knowledge {
namespace {

using google::protobuf::Value;

int64_t NowMs() {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
}

std::string FileUri(const std::string& path) {
  std::string uri = "file://";
  for (unsigned char c : path) {
    if (isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' ||
        c == '~') {
      uri.push_back(static_cast<char>(c));
    } else {
      absl::StrAppend(&uri, "%", absl::Hex(c, absl::kZeroPad2));
    }
  }
  return uri;
}

std::string UriPath(absl::string_view uri) {
  if (!absl::ConsumePrefix(&uri, "file://")) return "";
  std::string path;
  for (size_t i = 0; i < uri.size(); ++i) {
    if (uri[i] == '%' && i + 2 < uri.size()) {
      int value = 0;
      if (absl::SimpleHexAtoi(uri.substr(i + 1, 2), &value)) {
        path.push_back(static_cast<char>(value));
        i += 2;
        continue;
      }
    }
    path.push_back(uri[i]);
  }
  return path;
}

// LSP columns count UTF-16 code units; ours count bytes.
int Utf16FromByte(absl::string_view line, int byte_offset) {
  int units = 0;
  for (int i = 0; i < byte_offset && i < static_cast<int>(line.size());) {
    unsigned char c = line[i];
    int length = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    units += length == 4 ? 2 : 1;
    i += length;
  }
  return units;
}

int ByteFromUtf16(absl::string_view line, int units) {
  int i = 0;
  while (units > 0 && i < static_cast<int>(line.size())) {
    unsigned char c = line[i];
    int length = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    units -= length == 4 ? 2 : 1;
    i += length;
  }
  return i;
}

absl::string_view LineOf(absl::string_view text, int line) {
  int current = 0;
  size_t start = 0;
  while (current < line) {
    size_t newline = text.find('\n', start);
    if (newline == absl::string_view::npos) return {};
    start = newline + 1;
    ++current;
  }
  size_t end = text.find('\n', start);
  return text.substr(start, end == absl::string_view::npos ? text.size() - start
                                                           : end - start);
}

absl::StatusOr<Value> ParseJson(const std::string& json) {
  Value value;
  auto status = google::protobuf::util::JsonStringToMessage(json, &value);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the language server sent invalid JSON: ", status.ToString()));
  }
  return value;
}

const Value* Member(const Value& value, const std::string& name) {
  if (!value.has_struct_value()) return nullptr;
  auto it = value.struct_value().fields().find(name);
  return it == value.struct_value().fields().end() ? nullptr : &it->second;
}

}  // namespace

LspSession::LspSession(LspOptions options, pid_t pid, UniqueFd to_server,
                       UniqueFd from_server)
    : options_(std::move(options)),
      pid_(pid),
      to_server_(std::move(to_server)),
      from_server_(std::move(from_server)) {}

LspSession::~LspSession() {
  to_server_.Reset();
  from_server_.Reset();
  if (pid_ > 0) {
    // The server runs in its own process group: end it and its helpers.
    kill(-pid_, SIGKILL);
    int status;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

absl::StatusOr<std::unique_ptr<LspSession>> LspSession::Start(
    const LspOptions& options) {
  std::vector<std::string> argv_strings =
      absl::StrSplit(options.command, ' ', absl::SkipEmpty());
  if (argv_strings.empty()) {
    return absl::InvalidArgumentError(
        "knowledge.lsp: the language server command is empty");
  }
  int in_pipe[2], out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0) return LastErrnoStatus("pipe2");
  UniqueFd in_read(in_pipe[0]), in_write(in_pipe[1]);
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return LastErrnoStatus("pipe2");
  UniqueFd out_read(out_pipe[0]), out_write(out_pipe[1]);
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return LastErrnoStatus("fork");
  if (pid == 0) {
    // A client that dies without its destructor (killed) takes the server
    // with it: the server is in a group of its own, out of the client's
    // group's signals.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(125);
    setpgid(0, 0);
    dup2(in_read.get(), 0);
    dup2(out_write.get(), 1);
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) dup2(null, 2);
    if (!options.root.empty() && chdir(options.root.c_str()) != 0) _exit(126);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  // The child's ends: closed here so that the server's exit reads as end
  // of file.
  in_read.Reset();
  out_write.Reset();
  signal(SIGPIPE, SIG_IGN);  // a dead server is an error status, not a kill
  std::unique_ptr<LspSession> session(
      new LspSession(options, pid, std::move(in_write), std::move(out_read)));
  int id = session->next_id_++;
  RETURN_IF_ERROR(session->Send(absl::StrCat(
      "{\"jsonrpc\":\"2.0\",\"id\":", id,
      ",\"method\":\"initialize\",\"params\":{\"processId\":", getpid(),
      ",\"rootUri\":", JsonString(FileUri(options.root)),
      ",\"workspaceFolders\":[{\"uri\":", JsonString(FileUri(options.root)),
      ",\"name\":\"project\"}],\"capabilities\":{\"workspace\":{"
      "\"configuration\":true}}}}")));
  absl::StatusOr<std::string> reply = session->AwaitResponse(id);
  if (!reply.ok()) {
    return absl::Status(
        reply.status().code(),
        absl::StrCat("language server `", options.command,
                     "` did not initialize: ", reply.status().message()));
  }
  RETURN_IF_ERROR(session->Send(
      "{\"jsonrpc\":\"2.0\",\"method\":\"initialized\",\"params\":{}}"));
  return session;
}

absl::Status LspSession::Send(const std::string& json) {
  std::string frame =
      absl::StrCat("Content-Length: ", json.size(), "\r\n\r\n", json);
  absl::Status status = WriteAll(to_server_.get(), frame);
  if (!status.ok()) {
    return absl::UnavailableError(
        absl::StrCat("language server `", options_.command,
                     "` closed its input: ", status.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> LspSession::ReadMessage(int64_t deadline_ms) {
  while (true) {
    size_t header_end = buffer_.find("\r\n\r\n");
    if (header_end != std::string::npos) {
      size_t length = 0;
      bool found = false;
      for (absl::string_view line : absl::StrSplit(
               absl::string_view(buffer_).substr(0, header_end), "\r\n")) {
        if (absl::StartsWithIgnoreCase(line, "Content-Length:")) {
          found = absl::SimpleAtoi(absl::StripAsciiWhitespace(line.substr(15)),
                                   &length);
        }
      }
      if (!found || length > (64u << 20)) {
        return absl::DataLossError("language server: bad message header");
      }
      if (buffer_.size() >= header_end + 4 + length) {
        std::string body = buffer_.substr(header_end + 4, length);
        buffer_.erase(0, header_end + 4 + length);
        return body;
      }
    }
    int64_t left = deadline_ms - NowMs();
    if (left <= 0) {
      return absl::DeadlineExceededError(
          absl::StrCat("language server `", options_.command,
                       "` did not answer within ", options_.timeout_ms, " ms"));
    }
    struct pollfd fd = {from_server_.get(), POLLIN, 0};
    int ready = poll(&fd, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return LastErrnoStatus("poll(language server)");
    if (ready == 0) continue;
    char chunk[65536];
    ssize_t n = read(from_server_.get(), chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::UnavailableError(
          absl::StrCat("language server `", options_.command, "` exited"));
    }
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

absl::StatusOr<std::string> LspSession::AwaitResponse(int id) {
  int64_t deadline = NowMs() + options_.timeout_ms;
  while (true) {
    ASSIGN_OR_RETURN(std::string body, ReadMessage(deadline));
    ASSIGN_OR_RETURN(Value message, ParseJson(body));
    const Value* method = Member(message, "method");
    const Value* message_id = Member(message, "id");
    if (method != nullptr) {
      if (message_id == nullptr) continue;  // a notification
      // A request from the server: answer so that it goes on.
      std::string id_json;
      if (message_id->has_number_value()) {
        id_json =
            absl::StrCat(static_cast<int64_t>(message_id->number_value()));
      } else {
        id_json = JsonString(message_id->string_value());
      }
      std::string result = "null";
      if (method->string_value() == "workspace/configuration") {
        const Value* params = Member(message, "params");
        const Value* items = params ? Member(*params, "items") : nullptr;
        int count = items ? items->list_value().values_size() : 0;
        result = "[";
        for (int i = 0; i < count; ++i) result += i ? ",null" : "null";
        result += "]";
      }
      RETURN_IF_ERROR(Send(absl::StrCat("{\"jsonrpc\":\"2.0\",\"id\":", id_json,
                                        ",\"result\":", result, "}")));
      continue;
    }
    if (message_id != nullptr && message_id->has_number_value() &&
        static_cast<int>(message_id->number_value()) == id) {
      if (const Value* error = Member(message, "error")) {
        const Value* text = Member(*error, "message");
        return absl::InternalError(
            absl::StrCat("language server error: ",
                         text ? text->string_value() : "unknown"));
      }
      return body;
    }
  }
}

absl::Status LspSession::OpenDocument(const std::string& path) {
  for (const std::string& open : opened_) {
    if (open == path) return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(std::string text,
                   ReadFileToString(JoinPath(options_.root, path)));
  RETURN_IF_ERROR(Send(absl::StrCat(
      "{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didOpen\",\"params\":{"
      "\"textDocument\":{\"uri\":",
      JsonString(FileUri(JoinPath(options_.root, path))),
      ",\"languageId\":", JsonString(options_.language_id),
      ",\"version\":1,\"text\":", JsonString(text), "}}}")));
  opened_.push_back(path);
  return absl::OkStatus();
}

absl::Status LspSession::OpenDocuments(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) RETURN_IF_ERROR(OpenDocument(path));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Hit>> LspSession::References(
    const QueryPosition& position) {
  std::string absolute = JoinPath(options_.root, position.path);
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(absolute));
  RETURN_IF_ERROR(OpenDocument(position.path));
  int character =
      Utf16FromByte(LineOf(text, position.line - 1), position.column - 1);
  int id = next_id_++;
  RETURN_IF_ERROR(Send(absl::StrCat(
      "{\"jsonrpc\":\"2.0\",\"id\":", id,
      ",\"method\":\"textDocument/references\",\"params\":{\"textDocument\":{"
      "\"uri\":",
      JsonString(FileUri(absolute)), "},\"position\":{\"line\":",
      position.line - 1, ",\"character\":", character,
      "},\"context\":{\"includeDeclaration\":false}}}")));
  ASSIGN_OR_RETURN(std::string body, AwaitResponse(id));
  ASSIGN_OR_RETURN(Value message, ParseJson(body));
  const Value* result = Member(message, "result");
  std::vector<Hit> hits;
  if (result == nullptr || !result->has_list_value()) return hits;
  std::string root_prefix = options_.root;
  if (!absl::EndsWith(root_prefix, "/")) root_prefix += "/";
  for (const Value& location : result->list_value().values()) {
    const Value* uri = Member(location, "uri");
    const Value* range = Member(location, "range");
    const Value* start = range ? Member(*range, "start") : nullptr;
    if (uri == nullptr || start == nullptr) continue;
    std::string path = UriPath(uri->string_value());
    if (!absl::StartsWith(path, root_prefix)) continue;  // outside the project
    Hit hit;
    hit.path = path.substr(root_prefix.size());
    const Value* line = Member(*start, "line");
    const Value* column = Member(*start, "character");
    hit.line = line ? static_cast<int>(line->number_value()) + 1 : 1;
    int units = column ? static_cast<int>(column->number_value()) : 0;
    absl::StatusOr<std::string> file = ReadFileToString(path);
    hit.column = (file.ok() ? ByteFromUtf16(LineOf(*file, hit.line - 1), units)
                            : units) +
                 1;
    hit.provenance = Provenance::kPrecise;
    hits.push_back(std::move(hit));
  }
  return hits;
}

}  // namespace garuda::knowledge
