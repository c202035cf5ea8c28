#include "lib/jobs/timer.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "lib/base/files.h"
#include "lib/base/home.h"
#include "lib/base/status_macros.h"
#include "lib/jobs/job_file.h"

namespace garuda {
namespace jobs {
namespace {

// One word of ExecStart=: quoted as systemd reads it, '%' doubled (a unit
// file's specifier character).
std::string UnitWord(const std::string& word) {
  std::string escaped =
      absl::StrReplaceAll(word, {{"%", "%%"}, {"\\", "\\\\"}, {"\"", "\\\""}});
  if (escaped.find_first_of(" \t'$;") == std::string::npos) return escaped;
  return absl::StrCat("\"", escaped, "\"");
}

// One word for the shell of a crontab line, '%' escaped (cron turns it
// into a newline).
std::string ShellWord(const std::string& word) {
  std::string quoted =
      absl::StrCat("'", absl::StrReplaceAll(word, {{"'", "'\\''"}}), "'");
  return absl::StrReplaceAll(quoted, {{"%", "\\%"}});
}

// "HH:MM" or "HH:MM:SS" (seconds 00 only) -> {minute, hour}.
bool ParseTime(absl::string_view text, std::string* minute, std::string* hour) {
  std::vector<std::string> parts = absl::StrSplit(text, ':');
  if (parts.size() < 2 || parts.size() > 3) return false;
  int h, m, s = 0;
  if (!absl::SimpleAtoi(parts[0], &h) || !absl::SimpleAtoi(parts[1], &m) ||
      (parts.size() == 3 && !absl::SimpleAtoi(parts[2], &s))) {
    return false;
  }
  if (h < 0 || h > 23 || m < 0 || m > 59 || s != 0) return false;
  *minute = absl::StrCat(m);
  *hour = absl::StrCat(h);
  return true;
}

// "Mon", "Mon,Fri", "Mon..Fri" -> cron's "1", "1,5", "1-5".
bool ParseWeekdays(absl::string_view text, std::string* weekday) {
  static const char* kDays[] = {"sunday",   "monday", "tuesday", "wednesday",
                                "thursday", "friday", "saturday"};
  // "Mon" or "Monday", as systemd takes them.
  auto day = [](absl::string_view name, int* number) {
    std::string lower = absl::AsciiStrToLower(name);
    for (int i = 0; i < 7; ++i) {
      if (lower.size() >= 3 && absl::StartsWith(kDays[i], lower)) {
        *number = i;
        return true;
      }
    }
    return false;
  };
  std::vector<std::string> out;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    std::vector<absl::string_view> range = absl::StrSplit(part, "..");
    int from, to;
    if (range.size() == 1 && day(range[0], &from)) {
      out.push_back(absl::StrCat(from));
    } else if (range.size() == 2 && day(range[0], &from) &&
               day(range[1], &to)) {
      out.push_back(absl::StrCat(from, "-", to));
    } else {
      return false;
    }
  }
  *weekday = absl::StrJoin(out, ",");
  return !out.empty();
}

}  // namespace

absl::StatusOr<std::string> CrontabSchedule(const std::string& on_calendar) {
  const std::string spec(absl::StripAsciiWhitespace(on_calendar));
  const std::pair<const char*, const char*> shorthands[] = {
      {"minutely", "* * * * *"}, {"hourly", "0 * * * *"},
      {"daily", "0 0 * * *"},    {"weekly", "0 0 * * 1"},
      {"monthly", "0 0 1 * *"},  {"yearly", "0 0 1 1 *"},
      {"annually", "0 0 1 1 *"}};
  for (const auto& [name, cron] : shorthands) {
    if (absl::AsciiStrToLower(spec) == name) return std::string(cron);
  }
  std::vector<std::string> words = absl::StrSplit(spec, ' ', absl::SkipEmpty());
  std::string weekday = "*", minute, hour;
  size_t i = 0;
  if (!words.empty() && !absl::StrContains(words[0], ':') &&
      !absl::StrContains(words[0], '-') && ParseWeekdays(words[0], &weekday)) {
    ++i;
  }
  if (i < words.size() && words[i] == "*-*-*") ++i;
  if (i + 1 == words.size() && ParseTime(words[i], &minute, &hour)) {
    return absl::StrCat(minute, " ", hour, " * * ", weekday);
  }
  return absl::NotFoundError(
      absl::StrCat("OnCalendar \"", spec,
                   "\" has no crontab form that this command "
                   "writes; write the crontab line by hand (crontab(5))"));
}

absl::StatusOr<TimerUnits> MakeTimerUnits(const TimerRequest& request) {
  RETURN_IF_ERROR(CheckJobName(request.job));
  const std::string spec(absl::StripAsciiWhitespace(request.on_calendar));
  if (spec.empty() || absl::StrContains(spec, '\n') ||
      absl::StrContains(spec, '\r')) {
    return absl::InvalidArgumentError(
        "--on-calendar: one systemd calendar expression, e.g. daily, "
        "\"Mon..Fri 03:00\" (systemd.time(7))");
  }
  TimerUnits units;
  units.name = absl::StrCat("garuda-job-", ProjectKey(request.checkout), "-",
                            request.job);
  const std::vector<std::string> command = {
      request.agent_program, "run", request.job, "--project", request.checkout};
  std::vector<std::string> exec;
  for (const std::string& word : command) exec.push_back(UnitWord(word));
  units.service = absl::StrCat(
      "# Written by garuda-agent jobs timer: the Garuda job ", request.job,
      " of ", request.checkout, ".\n", "[Unit]\n", "Description=Garuda job ",
      request.job, " (", request.checkout, ")\n", "\n[Service]\n",
      "Type=oneshot\n", "WorkingDirectory=", UnitWord(request.checkout), "\n",
      "ExecStart=", absl::StrJoin(exec, " "), "\n");
  units.timer =
      absl::StrCat("# Written by garuda-agent jobs timer.\n", "[Unit]\n",
                   "Description=Run the Garuda job ", request.job, " (",
                   request.checkout, ")\n", "\n[Timer]\n",
                   "OnCalendar=", absl::StrReplaceAll(spec, {{"%", "%%"}}),
                   "\n", "Persistent=true\n", "Unit=", units.name, ".service\n",
                   "\n[Install]\n", "WantedBy=timers.target\n");
  absl::StatusOr<std::string> cron = CrontabSchedule(spec);
  std::vector<std::string> shell;
  for (const std::string& word : command) shell.push_back(ShellWord(word));
  units.crontab = cron.ok()
                      ? absl::StrCat(*cron, " ", absl::StrJoin(shell, " "))
                      : absl::StrCat("# ", cron.status().message());
  return units;
}

absl::StatusOr<std::string> WriteTimerUnits(const TimerUnits& units,
                                            const std::string& folder) {
  RETURN_IF_ERROR(MakeDirectories(folder, 0755));
  RETURN_IF_ERROR(WriteFileAtomically(JoinPath(folder, units.name + ".service"),
                                      units.service, 0644));
  const std::string timer = JoinPath(folder, units.name + ".timer");
  RETURN_IF_ERROR(WriteFileAtomically(timer, units.timer, 0644));
  return timer;
}

}  // namespace jobs
}  // namespace garuda
