#include "lib/jobs/job_file.h"

#include <sys/stat.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "lib/base/files.h"
#include "lib/base/home.h"
#include "lib/base/json_message.h"
#include "lib/base/status_macros.h"
#include "lib/jobs/scope.h"

namespace garuda {
namespace jobs {

absl::StatusOr<std::string> JobFilePath(const std::string& checkout,
                                        const std::string& job) {
  if (job.empty()) return absl::InvalidArgumentError("no job named");
  if (absl::StrContains(job, '/') || absl::EndsWith(job, ".json")) return job;
  const std::string path = ProjectJobFile(checkout, job);
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat(
        "no job \"", job, "\": ", path,
        " does not exist (a job is a name in .garuda/jobs/ or a path to a "
        "job file)"));
  }
  return path;
}

absl::Status CheckJobName(absl::string_view name) {
  // git refuses ".." and a ".lock" or "." ending in a branch's name.
  bool valid = !name.empty() && name[0] != '.' && name[0] != '-' &&
               name.size() <= 100 && !absl::StrContains(name, "..") &&
               !absl::EndsWith(name, ".lock") && !absl::EndsWith(name, ".");
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' &&
        c != '_' && c != '-') {
      valid = false;
    }
  }
  if (valid) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "job name \"", name,
      "\": a job's name (its file's name without .json) is letters, digits, "
      "'.', '_' and '-', up to 100, not starting with '.' or '-', "
      "without \"..\" and not ending in \".\" or \".lock\""));
}

absl::StatusOr<Job> ParseJobFile(const std::string& text,
                                 const std::string& source) {
  Job job;
  job.path = source;
  job.name = std::string(absl::StripSuffix(Basename(source), ".json"));
  RETURN_IF_ERROR(ParseJsonMessage(text, source, &job.file));
  // Presence of the key, not its length, tells an old job from one whose
  // scope is empty (nothing writable): a repeated field cannot say that.
  google::protobuf::Struct object;
  if (!google::protobuf::util::JsonStringToMessage(
           google::protobuf::StringPiece(text.data(), text.size()), &object)
           .ok()) {
    return absl::InternalError(absl::StrCat(source, ": parsed once, not twice"));
  }
  job.whole_worktree = !object.fields().contains("writeScope") &&
                       !object.fields().contains("write_scope");
  if (absl::StripAsciiWhitespace(job.file.prompt()).empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": \"prompt\" is required: what the job asks the model to do"));
  }
  for (int i = 0; i < job.file.write_scope_size(); ++i) {
    absl::Status entry = CheckScopeEntry(job.file.write_scope(i));
    if (!entry.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": writeScope[", i, "]: ", entry.message()));
    }
  }
  return job;
}

absl::StatusOr<Job> ReadJobFile(const std::string& path) {
  // A job file comes with the repository: no link (to /dev/zero or a
  // secret), and a larger file is refused by the reader, naming the cap.
  RegularFileOptions options;
  options.max_bytes = kMaxJobFileBytes;
  ASSIGN_OR_RETURN(std::string text, ReadRegularFile(path, options));
  return ParseJobFile(text, path);
}

}  // namespace jobs
}  // namespace garuda
