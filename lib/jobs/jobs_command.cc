#include "lib/jobs/jobs_command.h"

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "lib/base/files.h"
#include "lib/base/home.h"
#include "lib/base/json_message.h"
#include "lib/base/visible.h"
#include "lib/jobs/job_file.h"
#include "lib/jobs/process.h"
#include "lib/jobs/run.h"
#include "lib/jobs/timer.h"
#include "proto/job.pb.h"

namespace garuda {
namespace jobs {
namespace {

void Say(int fd, const std::string& line) {
  WriteAll(fd, absl::StrCat("garuda-agent: ", line, "\n")).IgnoreError();
}

std::vector<std::string> JobNames(const std::string& checkout) {
  std::vector<std::string> names;
  const std::string folder = Dirname(ProjectJobFile(checkout, "x"));
  DIR* dir = ::opendir(folder.c_str());
  if (dir == nullptr) return names;
  while (struct dirent* entry = ::readdir(dir)) {
    absl::string_view name = entry->d_name;
    if (name.size() > 5 && absl::ConsumeSuffix(&name, ".json")) {
      names.emplace_back(name);
    }
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

std::string LastResult(const std::string& home, const std::string& checkout,
                       const std::string& name) {
  JobReport last;
  absl::Status read =
      ReadJsonMessageFile(LastReportFile(home, checkout, name), &last);
  if (absl::IsNotFound(read)) return "never run";
  if (!read.ok())
    return absl::StrCat("last result unreadable: ", read.message());
  std::string text = absl::StrCat("last: ", last.status());
  if (!last.branch().empty()) absl::StrAppend(&text, " ", last.branch());
  if (!last.commit().empty()) {
    absl::StrAppend(&text, " ", last.commit().substr(0, 12));
  }
  if (!last.reason().empty()) absl::StrAppend(&text, " (", last.reason(), ")");
  return text;
}

}  // namespace

int ListJobsCommand(const JobsCommandOptions& options) {
  absl::StatusOr<std::string> checkout = RealProjectRoot(options.checkout);
  absl::StatusOr<std::string> home = HomeDirectory();
  if (!checkout.ok() || !home.ok()) {
    Say(options.err_fd, std::string(!checkout.ok() ? checkout.status().message()
                                                   : home.status().message()));
    return 2;
  }
  std::vector<std::string> names = JobNames(*checkout);
  if (names.empty()) {
    Say(options.err_fd,
        absl::StrCat("no jobs in ", ProjectJobFile(*checkout, "NAME"),
                     " (docs/jobs.md; /schedule in a chat proposes one)"));
    return 0;
  }
  std::string out;
  for (const std::string& name : names) {
    absl::StatusOr<Job> job = ReadJobFile(ProjectJobFile(*checkout, name));
    std::string scope;
    if (!job.ok()) {
      scope = absl::StrCat("invalid: ", job.status().message());
    } else if (job->whole_worktree) {
      scope = "scope: the whole worktree";
    } else {
      scope = absl::StrCat("scope: ",
                           job->file.write_scope().empty()
                               ? "nothing"
                               : absl::StrJoin(job->file.write_scope(), ", "));
    }
    absl::StrAppend(&out, MakeVisible(name), "  ", MakeVisible(scope), "  ",
                    MakeVisible(LastResult(*home, *checkout, name)), "\n");
  }
  WriteAll(options.out_fd, out).IgnoreError();
  return 0;
}

int JobTimerCommand(const JobsCommandOptions& options) {
  absl::StatusOr<std::string> checkout = RealProjectRoot(options.checkout);
  if (!checkout.ok()) {
    Say(options.err_fd, std::string(checkout.status().message()));
    return 2;
  }
  // The job must read now: a timer of a broken job fails every night.
  absl::StatusOr<std::string> path = JobFilePath(*checkout, options.job);
  absl::StatusOr<Job> job =
      path.ok() ? ReadJobFile(*path) : absl::StatusOr<Job>(path.status());
  if (!job.ok()) {
    Say(options.err_fd, std::string(job.status().message()));
    return 2;
  }
  // systemd's own reading of the calendar, where it is installed: a spec it
  // cannot parse would make a timer that never fires.
  constexpr char kAnalyze[] = "/usr/bin/systemd-analyze";
  if (::access(kAnalyze, X_OK) == 0) {
    absl::StatusOr<ProgramRun> checked = RunProgram(
        {kAnalyze, "calendar", options.on_calendar}, -1, options.err_fd);
    if (!checked.ok() || checked->exit_code != 0) {
      Say(options.err_fd,
          absl::StrCat("--on-calendar \"", MakeVisible(options.on_calendar),
                       "\" is not a calendar expression systemd reads "
                       "(systemd.time(7)); nothing was written"));
      return 2;
    }
  }
  TimerRequest request;
  request.checkout = *checkout;
  request.job = job->name;
  request.on_calendar = options.on_calendar;
  request.agent_program = options.agent_program;
  absl::StatusOr<TimerUnits> units = MakeTimerUnits(request);
  if (!units.ok()) {
    Say(options.err_fd, std::string(units.status().message()));
    return 2;
  }
  if (options.print) {
    WriteAll(options.out_fd,
             absl::StrCat("# ", units->name, ".service\n", units->service,
                          "\n# ", units->name, ".timer\n", units->timer,
                          "\n# crontab(5), for machines without systemd:\n",
                          units->crontab, "\n"))
        .IgnoreError();
    return 0;
  }
  const char* config = ::getenv("XDG_CONFIG_HOME");
  absl::StatusOr<std::string> home = HomeDirectory();
  if ((config == nullptr || *config == '\0') && !home.ok()) {
    Say(options.err_fd, std::string(home.status().message()));
    return 2;
  }
  const std::string folder = JoinPath(config != nullptr && *config != '\0'
                                          ? std::string(config)
                                          : JoinPath(*home, ".config"),
                                      "systemd/user");
  absl::StatusOr<std::string> written = WriteTimerUnits(*units, folder);
  if (!written.ok()) {
    Say(options.err_fd, std::string(written.status().message()));
    return 1;
  }
  WriteAll(options.out_fd,
           absl::StrCat("wrote ", *written, " and its .service\n",
                        "start it with: systemctl --user daemon-reload && "
                        "systemctl --user enable --now ",
                        units->name, ".timer\n",
                        "without systemd, this crontab line does the same:\n",
                        units->crontab, "\n"))
      .IgnoreError();
  return 0;
}

}  // namespace jobs
}  // namespace garuda
