#include "lib/tools/read_tools.h"

#include <fcntl.h>
#include <regex.h>
#include <sys/stat.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/permissions/rules.h"
#include "lib/question/diff.h"

namespace garuda {
namespace {

// The content of a regular file opened by OpenForRead (or beneath a walked
// folder), at most kReadFileBytesLimit bytes.
absl::StatusOr<std::string> ReadRegular(int fd, absl::string_view shown) {
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("\"", shown, "\" is not a regular file"));
  }
  if (static_cast<uint64_t>(st.st_size) > kReadFileBytesLimit) {
    return absl::FailedPreconditionError(absl::StrCat(
        "\"", shown, "\" is too large to read (", st.st_size, " bytes)"));
  }
  // O_NONBLOCK was only for the open; a regular file reads normally.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return ReadAll(fd);
}

std::string Shown(const std::string& relative) {
  return relative.empty() ? "." : relative;
}

}  // namespace

bool MatchToolGlob(absl::string_view glob, absl::string_view relative) {
  if (glob.empty()) return true;
  if (glob.find('/') == absl::string_view::npos) {
    size_t slash = relative.rfind('/');
    absl::string_view name = slash == absl::string_view::npos
                                 ? relative
                                 : relative.substr(slash + 1);
    return MatchPathGlob(glob, name);
  }
  return MatchPathGlob(glob, relative);
}

absl::StatusOr<std::string> ReadFileTool(const Project& project,
                                         const ReadFileInput& input) {
  ASSIGN_OR_RETURN(OpenedPath opened, project.OpenForRead(input.path));
  if (opened.is_folder) {
    return absl::FailedPreconditionError(absl::StrCat(
        "\"", input.path, "\" is a folder; use list_files to see its files"));
  }
  ASSIGN_OR_RETURN(std::string content,
                   ReadRegular(opened.fd.get(), input.path));
  if (content.empty())
    return absl::StrCat(Shown(opened.relative), " is empty\n");
  if (LooksBinary(content)) {
    return absl::StrCat(Shown(opened.relative), " is a binary file (",
                        content.size(), " bytes); not shown\n");
  }
  std::vector<absl::string_view> lines = absl::StrSplit(content, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  const int64_t total = static_cast<int64_t>(lines.size());
  if (input.offset > total) {
    return absl::OutOfRangeError(
        absl::StrCat("offset ", input.offset, " is past the end of \"",
                     input.path, "\", which has ", total, " lines"));
  }
  std::string out;
  int64_t last = std::min(total, input.offset - 1 + input.limit);
  for (int64_t line = input.offset; line <= last; ++line) {
    absl::StrAppendFormat(&out, "%6d\t%s\n", line, lines[line - 1]);
  }
  if (last < total) {
    absl::StrAppend(&out, "[lines ", input.offset, "-", last, " of ", total,
                    "; read on with offset ", last + 1, "]\n");
  }
  return out;
}

absl::StatusOr<std::string> ListFilesTool(Project& project,
                                          const ListFilesInput& input,
                                          const HiddenPredicate& hidden) {
  ASSIGN_OR_RETURN(OpenedPath start, project.OpenForRead(input.path));
  if (!start.is_folder) {
    return absl::FailedPreconditionError(
        absl::StrCat("\"", input.path, "\" is not a folder"));
  }
  std::string out;
  size_t listed = 0;
  const size_t skip = start.relative.empty() ? 0 : start.relative.size() + 1;
  ASSIGN_OR_RETURN(
      bool whole,
      project.Walk(
          start, kListLimit,
          [&](const std::string& relative, int, const std::string&, bool) {
            if (!MatchToolGlob(input.glob, relative.substr(skip)) ||
                (hidden && hidden(relative))) {
              return;
            }
            absl::StrAppend(&out, relative, "\n");
            ++listed;
          }));
  if (listed == 0) absl::StrAppend(&out, "(no files)\n");
  if (!whole) {
    absl::StrAppend(&out, "[listing stopped after ", kListLimit,
                    " files; give a path or a glob]\n");
  }
  return out;
}

namespace {

struct RegexDeleter {
  void operator()(regex_t* regex) const {
    ::regfree(regex);
    delete regex;
  }
};

void GrepContent(const regex_t& regex, const std::string& relative,
                 const std::string& content, size_t* matches,
                 std::string* out) {
  if (LooksBinary(content)) return;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(content, '\n')) {
    ++number;
    if (*matches >= kGrepMatchLimit) return;
    std::string text(line);
    if (::regexec(&regex, text.c_str(), 0, nullptr, 0) != 0) continue;
    ++*matches;
    if (text.size() > 500) text = absl::StrCat(text.substr(0, 500), "...");
    absl::StrAppend(out, relative, ":", number, ": ", text, "\n");
  }
}

}  // namespace

absl::StatusOr<std::string> GrepTool(Project& project, const GrepInput& input,
                                     const HiddenPredicate& hidden) {
  std::unique_ptr<regex_t, RegexDeleter> regex(new regex_t);
  int code =
      ::regcomp(regex.get(), input.pattern.c_str(), REG_EXTENDED | REG_NOSUB);
  if (code != 0) {
    char message[256];
    ::regerror(code, regex.get(), message, sizeof(message));
    delete regex.release();  // nothing to regfree after a failed regcomp
    return absl::InvalidArgumentError(absl::StrCat(
        "grep: the pattern \"", input.pattern,
        "\" is not a valid extended regular expression: ", message));
  }
  ASSIGN_OR_RETURN(OpenedPath start, project.OpenForRead(input.path));
  std::string out;
  size_t matches = 0;
  bool whole = true;
  if (!start.is_folder) {
    if (hidden && hidden(start.relative)) {
      return absl::PermissionDeniedError(
          absl::StrCat("\"", input.path, "\" may not be searched"));
    }
    ASSIGN_OR_RETURN(std::string content,
                     ReadRegular(start.fd.get(), input.path));
    GrepContent(*regex, start.relative, content, &matches, &out);
  } else {
    const size_t skip = start.relative.empty() ? 0 : start.relative.size() + 1;
    ASSIGN_OR_RETURN(
        whole,
        project.Walk(start, kListLimit,
                     [&](const std::string& relative, int dir_fd,
                         const std::string& name, bool is_regular) {
                       if (!is_regular || matches >= kGrepMatchLimit ||
                           !MatchToolGlob(input.glob, relative.substr(skip)) ||
                           (hidden && hidden(relative))) {
                         return;
                       }
                       int fd = ::openat(dir_fd, name.c_str(),
                                         O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
                                             O_CLOEXEC | O_NOCTTY);
                       if (fd < 0) return;
                       UniqueFd file(fd);
                       absl::StatusOr<std::string> content =
                           ReadRegular(file.get(), relative);
                       if (!content.ok()) return;
                       GrepContent(*regex, relative, *content, &matches, &out);
                     }));
  }
  if (matches == 0) absl::StrAppend(&out, "(no matches)\n");
  if (matches >= kGrepMatchLimit) {
    absl::StrAppend(&out, "[stopped after ", kGrepMatchLimit,
                    " matching lines; narrow the pattern, path or glob]\n");
  }
  if (!whole) {
    absl::StrAppend(&out, "[search stopped after ", kListLimit,
                    " files; give a path or a glob]\n");
  }
  return out;
}

}  // namespace garuda
