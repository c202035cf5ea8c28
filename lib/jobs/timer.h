// `garuda-agent jobs timer NAME --on-calendar SPEC` (T6): a job run by the
// system's own timers, not by a Garuda daemon: a systemd user service and
// timer, and the equivalent crontab line for machines without systemd.
#ifndef GARUDA_LIB_JOBS_TIMER_H_
#define GARUDA_LIB_JOBS_TIMER_H_

#include <string>

#include "absl/status/statusor.h"

namespace garuda {
namespace jobs {

struct TimerRequest {
  std::string checkout;     // the person's checkout (a real path)
  std::string job;          // the job's name (.garuda/jobs/<job>.json)
  std::string on_calendar;  // systemd's OnCalendar=, e.g. "daily", "Mon 03:00"
  std::string agent_program;  // garuda-agent's path, for ExecStart
};

struct TimerUnits {
  std::string name;     // "garuda-job-<project key>-<job>" (no suffix)
  std::string service;  // the .service file's text
  std::string timer;    // the .timer file's text
  // "0 3 * * 1 cd ... && garuda-agent run ...", or a "#" line saying that
  // SPEC has no crontab form.
  std::string crontab;
};

// INVALID_ARGUMENT for an empty or multi-line SPEC, or a job name that is
// not [A-Za-z0-9._-].
absl::StatusOr<TimerUnits> MakeTimerUnits(const TimerRequest& request);

// The crontab fields (minute hour day month weekday) of an OnCalendar SPEC
// of the common forms: minutely, hourly, daily, weekly, monthly, yearly,
// "HH:MM", "*-*-* HH:MM[:SS]", "Mon,Fri HH:MM" and "Mon..Fri *-*-* HH:MM";
// NOT_FOUND for anything else.
absl::StatusOr<std::string> CrontabSchedule(const std::string& on_calendar);

// Writes the two units into `folder` (~/.config/systemd/user), each
// atomically. Returns the timer file's path.
absl::StatusOr<std::string> WriteTimerUnits(const TimerUnits& units,
                                            const std::string& folder);

}  // namespace jobs
}  // namespace garuda

#endif  // GARUDA_LIB_JOBS_TIMER_H_
