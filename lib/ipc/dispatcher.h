// The serving side of a channel: a table of which verbs are accepted in which
// state, as OpenSSH's monitor keeps one. Anything outside the table (an
// unknown verb, a verb in the wrong state, a wrong seq, a bad frame) ends the
// channel with an error that names the peer, the verb and the state.
//
// Request and Reply follow the envelope convention (docs/channels.md):
//   message FooRequest { uint64 seq = 1; oneof verb { ... } }
//   message FooReply { uint64 seq = 1; oneof verb { garuda.Error error = 2; ...
//   } }
#ifndef GARUDA_LIB_IPC_DISPATCHER_H_
#define GARUDA_LIB_IPC_DISPATCHER_H_

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/unique_fd.h"
#include "lib/ipc/channel.h"

namespace garuda {
namespace ipc {

template <typename Request, typename Reply>
class Dispatcher {
 public:
  using Verb = typename Request::VerbCase;
  // Returns OK with *reply filled, or an error that is sent back as
  // reply.error (the channel goes on, the state does not change). `fds` are
  // the descriptors that came with the request: take the ones you keep, the
  // rest are closed after the handler returns.
  using Handler = std::function<absl::Status(
      const Request&, std::vector<UniqueFd>& fds, Reply* reply)>;
  // A handler that also sends descriptors back with its reply (they are
  // closed on our side once sent).
  using HandlerWithReplyFds = std::function<absl::Status(
      const Request&, std::vector<UniqueFd>& fds, Reply* reply,
      std::vector<UniqueFd>* reply_fds)>;
  static constexpr int kSameState = -1;

  explicit Dispatcher(int initial_state = 0) : state_(initial_state) {}

  // Accept `verb` only while state() is one of `states`; after a successful
  // handler move to `next_state`.
  Dispatcher& On(Verb verb, std::vector<int> states, Handler handler,
                 int next_state = kSameState) {
    return OnWithReplyFds(
        verb, std::move(states),
        [handler = std::move(handler)](
            const Request& request, std::vector<UniqueFd>& fds, Reply* reply,
            std::vector<UniqueFd>*) { return handler(request, fds, reply); },
        next_state);
  }

  Dispatcher& OnWithReplyFds(Verb verb, std::vector<int> states,
                             HandlerWithReplyFds handler,
                             int next_state = kSameState) {
    if (rows_.count(verb) != 0 && setup_error_.ok()) {
      setup_error_ = absl::InternalError(
          absl::StrCat("verb ", VerbName(verb), " registered twice"));
    }
    rows_[verb] = Row{std::move(states), std::move(handler), next_state};
    return *this;
  }

  // A name for `state` in error messages ("state 'open'" instead of
  // "state 1").
  Dispatcher& NameState(int state, std::string name) {
    state_names_[state] = std::move(name);
    return *this;
  }

  // Serves until the peer closes cleanly (returns OK), a handler calls
  // StopAfterReply() (returns OK once that reply is sent), or the protocol
  // is broken: an unknown verb, a verb in the wrong state, a wrong seq, a
  // bad frame. Then it sends an Error reply when it still can, closes the
  // channel and returns the error, which names the verb and the state.
  absl::Status Serve(Channel& channel) {
    stop_ = false;
    while (!stop_) {
      absl::Status status = ServeOne(channel);
      if (absl::IsOutOfRange(status)) return absl::OkStatus();
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

  // A request that was read and handled, its reply not yet sent.
  struct Answer {
    Verb verb{};
    uint64_t seq = 0;
    Reply reply;
    std::vector<UniqueFd> fds;  // sent with the reply
  };

  // Reads and answers one request. OUT_OF_RANGE when the peer closed cleanly
  // instead; DEADLINE_EXCEEDED when a receive timeout (SO_RCVTIMEO) ran out
  // before a frame began (the channel goes on); any other error has ended
  // the channel as Serve() describes.
  absl::Status ServeOne(Channel& channel) {
    Answer answer;
    absl::Status status = Handle(channel, &answer);
    if (!status.ok()) return status;
    return Send(channel, answer);
  }

  // ServeOne in two halves, for a server that must do something between
  // the handler and the reply (a group commit of its journal for every
  // request of a round): Handle reads one request and runs its handler
  // (same results as ServeOne, the state already moved); Send sends its
  // reply.
  absl::Status Handle(Channel& channel, Answer* answer) {
    if (!setup_error_.ok()) return setup_error_;
    Request request;
    std::vector<UniqueFd> fds;
    absl::Status status = channel.Receive(&request, &fds);
    if (absl::IsOutOfRange(status)) return status;
    if (absl::IsDeadlineExceeded(status) && channel.status().ok()) {
      return status;  // A receive timeout before any frame: nothing broken.
    }
    if (!status.ok()) {
      return EndChannel(
          channel, expected_seq_,
          absl::Status(status.code(), absl::StrCat(status.message(), " (in ",
                                                   StateName(state_), ")")));
    }
    const std::string& peer = channel.options().peer_name;
    Verb verb = request.verb_case();
    auto row = rows_.find(verb);
    if (row == rows_.end()) {
      return EndChannel(channel, request.seq(),
                        absl::InvalidArgumentError(absl::StrCat(
                            peer, ": unknown verb ", VerbName(verb), " (seq ",
                            request.seq(), ", in ", StateName(state_), ")")));
    }
    if (request.seq() != expected_seq_) {
      return EndChannel(channel, request.seq(),
                        absl::InvalidArgumentError(absl::StrCat(
                            peer, ": verb ", VerbName(verb), " with seq ",
                            request.seq(), " where seq ", expected_seq_,
                            " was expected (in ", StateName(state_), ")")));
    }
    const std::vector<int>& states = row->second.states;
    if (std::find(states.begin(), states.end(), state_) == states.end()) {
      std::vector<std::string> allowed;
      for (int s : states) allowed.push_back(StateName(s));
      return EndChannel(channel, request.seq(),
                        absl::FailedPreconditionError(absl::StrCat(
                            peer, ": verb ", VerbName(verb),
                            " is not allowed in ", StateName(state_),
                            " (only in ", absl::StrJoin(allowed, ", "), ")")));
    }
    ++expected_seq_;
    answer->verb = verb;
    answer->seq = request.seq();
    answer->reply.Clear();
    answer->fds.clear();
    status = row->second.handler(request, fds, &answer->reply, &answer->fds);
    fds.clear();  // Descriptors the handler did not take.
    if (status.ok()) {
      if (row->second.next_state != kSameState) state_ = row->second.next_state;
    } else {
      answer->reply.Clear();
      answer->fds.clear();
      answer->reply.mutable_error()->set_code(static_cast<int>(status.code()));
      answer->reply.mutable_error()->set_message(
          std::string(status.message()));
    }
    answer->reply.set_seq(request.seq());
    return absl::OkStatus();
  }

  absl::Status Send(Channel& channel, const Answer& answer) {
    std::vector<int> raw_fds;
    for (const UniqueFd& fd : answer.fds) raw_fds.push_back(fd.get());
    absl::Status status = channel.Send(answer.reply, raw_fds);
    if (!status.ok()) {
      channel.Close();
      return absl::Status(
          status.code(),
          absl::StrCat(status.message(), " (replying to verb ",
                       VerbName(answer.verb), ", seq ", answer.seq, ", in ",
                       StateName(state_), ")"));
    }
    return absl::OkStatus();
  }

  // Called from a handler: Serve() returns OK once this reply is sent.
  void StopAfterReply() { stop_ = true; }

  int state() const { return state_; }
  void set_state(int state) { state_ = state; }

  // "'append'" for a verb of Request's oneof, "#99" for a number it lacks.
  static std::string VerbName(Verb verb) {
    if (static_cast<int>(verb) == 0) return "(none that this side knows)";
    const auto* field =
        Request::descriptor()->FindFieldByNumber(static_cast<int>(verb));
    if (field == nullptr || field->containing_oneof() == nullptr) {
      return absl::StrCat("#", static_cast<int>(verb));
    }
    return absl::StrCat("'", field->name(), "'");
  }

  std::string StateName(int state) const {
    auto it = state_names_.find(state);
    if (it == state_names_.end()) return absl::StrCat("state ", state);
    return absl::StrCat("state '", it->second, "'");
  }

 private:
  struct Row {
    std::vector<int> states;
    HandlerWithReplyFds handler;
    int next_state;
  };

  // Tells the peer why (when the socket still takes a frame), closes the
  // channel and returns `error`.
  absl::Status EndChannel(Channel& channel, uint64_t seq, absl::Status error) {
    Reply reply;
    reply.set_seq(seq);
    reply.mutable_error()->set_code(static_cast<int>(error.code()));
    reply.mutable_error()->set_message(std::string(error.message()));
    // Best effort: the peer may already be gone.
    channel.SendUnchecked(reply, {}).IgnoreError();
    channel.Close();
    return error;
  }

  std::map<Verb, Row> rows_;
  std::map<int, std::string> state_names_;
  int state_;
  uint64_t expected_seq_ = 1;
  bool stop_ = false;
  absl::Status setup_error_;
};

}  // namespace ipc
}  // namespace garuda

#endif  // GARUDA_LIB_IPC_DISPATCHER_H_
