#include "lib/acp/worker_channel.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace garuda {
namespace acp {
namespace {

// One row per message a side accepts: its method (empty for a response),
// its JSON-RPC kind and its verb.
template <typename Verb>
struct Row {
  const char* method;
  Message::Kind kind;
  Verb verb;
};

constexpr Row<FromWorkerVerb> kFromWorker[] = {
    {"", Message::Kind::kResponse, FromWorkerVerb::kResponse},
    {"session/update", Message::Kind::kNotification,
     FromWorkerVerb::kSessionUpdate},
    {"session/request_permission", Message::Kind::kRequest,
     FromWorkerVerb::kRequestPermission},
};

constexpr Row<FromFrontVerb> kFromFront[] = {
    {"", Message::Kind::kResponse, FromFrontVerb::kResponse},
    {"session/new", Message::Kind::kRequest, FromFrontVerb::kOpen},
    {"session/load", Message::Kind::kRequest, FromFrontVerb::kOpen},
    {"session/prompt", Message::Kind::kRequest, FromFrontVerb::kPrompt},
    // A cancel needs no answer: taken as a request too.
    {"session/cancel", Message::Kind::kNotification, FromFrontVerb::kCancel},
    {"session/cancel", Message::Kind::kRequest, FromFrontVerb::kCancel},
};

template <typename Verb, size_t N>
const Row<Verb>* Find(const Row<Verb> (&rows)[N], const Message& message) {
  for (const Row<Verb>& row : rows) {
    if (row.kind != message.kind) continue;
    if (message.kind == Message::Kind::kResponse ||
        message.method == row.method) {
      return &row;
    }
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<WorkerMessage> ParseFromWorker(const LineReader::Line& line) {
  Parsed parsed = line.too_long ? Parsed{} : ParseMessage(line.text);
  if (!parsed.message) {
    return absl::InvalidArgumentError("a message that is not JSON-RPC");
  }
  const Row<FromWorkerVerb>* row = Find(kFromWorker, *parsed.message);
  if (row == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(parsed.message->method, ", which a worker may not send"));
  }
  WorkerMessage out;
  out.verb = row->verb;
  if (row->verb != FromWorkerVerb::kResponse) {
    out.session_id = StringField(parsed.message->params, "sessionId");
  }
  out.message = *std::move(parsed.message);
  return out;
}

absl::StatusOr<FrontMessage> ParseFromFront(const LineReader::Line& line) {
  if (line.too_long) {
    return absl::InvalidArgumentError("a line over the limit");
  }
  Parsed parsed = ParseMessage(line.text);
  if (!parsed.message) {
    return absl::InvalidArgumentError("a message that is not JSON-RPC");
  }
  const Row<FromFrontVerb>* row = Find(kFromFront, *parsed.message);
  if (row == nullptr) {
    if (parsed.message->kind == Message::Kind::kRequest) {
      return FrontMessage{FromFrontVerb::kOtherRequest,
                          *std::move(parsed.message)};
    }
    return absl::InvalidArgumentError(
        absl::StrCat(parsed.message->method, ", which the front never sends"));
  }
  FrontMessage out;
  out.verb = row->verb;
  out.message = *std::move(parsed.message);
  return out;
}

}  // namespace acp
}  // namespace garuda
