// Project instructions: what a person (or a repository) tells every model
// that works in the project, in AGENTS.md at the project's root (CLAUDE.md
// where there is no AGENTS.md), and the person's own, for every project, in
// ~/.garuda/AGENTS.md. Read once at the session's start, capped, and added
// to the system prompt after Garuda's own rules.
#ifndef GARUDA_LIB_AGENT_INSTRUCTIONS_H_
#define GARUDA_LIB_AGENT_INSTRUCTIONS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace garuda {
namespace agent {

// Each file is read up to this many bytes; the rest is cut, and the prompt
// and the first lines say so.
inline constexpr size_t kMaxInstructionsBytes = 32 * 1024;

struct InstructionsFile {
  std::string path;  // as the person sees it in the first lines
  std::string text;  // at most kMaxInstructionsBytes, cut at a UTF-8 boundary
  bool cut = false;
  size_t size = 0;  // the file's whole size
};

struct ProjectInstructions {
  // The person's own first, then the project's.
  std::vector<InstructionsFile> files;
  // Files that were there but not read, with why ("AGENTS.md is a symbolic
  // link: not read"), for the first lines.
  std::vector<std::string> notices;
};

// Reads ~/.garuda/AGENTS.md (`home` is the person's home folder; empty: not
// looked for) and <project>/AGENTS.md, or <project>/CLAUDE.md when the
// project has no AGENTS.md. A project's file is opened beneath the root
// without following a link (a repository must not make the agent read and
// send /etc/shadow); either must be a regular file. A missing file is no
// error; an unreadable one is a notice, never a failed start.
ProjectInstructions LoadProjectInstructions(const std::string& project,
                                            const std::string& home);

// The part of the system prompt: each file in a block that names it, after
// a line saying these are the project's notes and that Garuda's own rules
// above still hold. Empty when there are no files.
std::string InstructionsPrompt(const ProjectInstructions& instructions);

// One line for the session's first lines: "Instructions: AGENTS.md (2.1 KB),
// ~/.garuda/AGENTS.md (cut at 32 KB)", or "" when there are none.
std::string InstructionsLine(const ProjectInstructions& instructions);

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_INSTRUCTIONS_H_
