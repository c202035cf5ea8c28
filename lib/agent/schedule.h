// /schedule [NAME] in a chat (T6): a job proposed from the conversation.
// The model writes the job's prompt (one turn, metered like any other);
// Garuda proposes the write scope itself, from the files the conversation
// named and the build output folders of the project's language; the job
// file goes to garuda-applier as a write_file of .garuda/jobs/NAME.json,
// and the applier's own question (prompt and scope in the file's diff) is
// the approval: a yes writes it, anything else writes nothing.
#ifndef GARUDA_LIB_AGENT_SCHEDULE_H_
#define GARUDA_LIB_AGENT_SCHEDULE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/agent/session_parts.h"
#include "lib/tools/project.h"
#include "proto/provider.pb.h"

namespace garuda {
namespace agent {

// What the model is asked for the job's prompt.
extern const char kSchedulePrompt[];

// The scope Garuda proposes: the folder of each file of the project that
// `paths` or `text` names (a file in the root: the file itself), and the
// build output folders of the language (target for Cargo and Maven, build
// and .gradle for Gradle, dist and build for npm and Python, build for
// CMake), each checked as a scope entry and without a link on the way.
std::vector<std::string> ProposeScope(const Project& project,
                                      const std::vector<std::string>& paths,
                                      const std::string& text);

// The paths of the conversation's edit and read calls.
std::vector<std::string> NamedPaths(
    const std::vector<provider::ChatMessage>& messages);

// The job file: {"prompt": ..., "writeScope": [...]} (lib/jobs reads it).
std::string ScheduledJobJson(const std::string& prompt,
                             const std::vector<std::string>& scope);

// The whole of /schedule: `argument` is the job's name ("" : "scheduled").
// An error only when the session cannot go on.
// The session's turn that writes the job's prompt: the model's answer, or
// why none came.
struct WrittenPrompt {
  std::string answer;
  bool answered = false;
  std::string stopped;  // why the turn ended early; may be ""
};
using PromptTurn =
    std::function<absl::StatusOr<WrittenPrompt>(const std::string& prompt)>;

// `messages` is the conversation (the scope's paths come from it, the
// prompt's turn included).
absl::Status ScheduleJob(const std::vector<provider::ChatMessage>& messages,
                         const SessionParts& parts,
                         const std::string& session_id,
                         const std::string& argument, const PromptTurn& turn);

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_SCHEDULE_H_
