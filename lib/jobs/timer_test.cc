#include "lib/jobs/timer.h"

#include <unistd.h>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/changeset/test_tree.h"
#include "lib/jobs/process.h"

namespace garuda {
namespace jobs {
namespace {

TEST(CrontabScheduleTest, TheCommonFormsAndNothingElse) {
  EXPECT_EQ(CrontabSchedule("daily").value_or("?"), "0 0 * * *");
  EXPECT_EQ(CrontabSchedule("hourly").value_or("?"), "0 * * * *");
  EXPECT_EQ(CrontabSchedule("03:30").value_or("?"), "30 3 * * *");
  EXPECT_EQ(CrontabSchedule("*-*-* 03:30:00").value_or("?"), "30 3 * * *");
  EXPECT_EQ(CrontabSchedule("Mon..Fri 03:00").value_or("?"), "0 3 * * 1-5");
  EXPECT_EQ(CrontabSchedule("Sat,Sunday *-*-* 22:15").value_or("?"),
            "15 22 * * 6,0");
  // Seconds cron cannot say, and forms this command does not translate.
  EXPECT_FALSE(CrontabSchedule("03:30:15").ok());
  EXPECT_FALSE(CrontabSchedule("2026-12-24 10:00").ok());
  EXPECT_FALSE(CrontabSchedule("Mo 10:00").ok());
  EXPECT_FALSE(CrontabSchedule("25:00").ok());
}

TimerRequest Request(const std::string& spec) {
  TimerRequest request;
  request.checkout = "/home/p/my project";
  request.job = "nightly";
  request.on_calendar = spec;
  request.agent_program = "/bin/echo";
  return request;
}

TEST(TimerUnitsTest, TheUnitsRunTheJobInItsCheckout) {
  absl::StatusOr<TimerUnits> units = MakeTimerUnits(Request("Mon..Fri 03:00"));
  ASSERT_TRUE(units.ok()) << units.status();
  EXPECT_TRUE(absl::StartsWith(units->name, "garuda-job-my_project-"));
  EXPECT_TRUE(absl::EndsWith(units->name, "-nightly"));
  EXPECT_TRUE(absl::StrContains(
      units->service,
      "ExecStart=/bin/echo run nightly --project \"/home/p/my project\"\n"))
      << units->service;
  EXPECT_TRUE(absl::StrContains(units->timer, "OnCalendar=Mon..Fri 03:00\n"));
  EXPECT_TRUE(absl::StrContains(units->timer, "Persistent=true\n"));
  EXPECT_EQ(units->crontab,
            "0 3 * * 1-5 '/bin/echo' 'run' 'nightly' '--project' "
            "'/home/p/my project'");
  absl::StatusOr<TimerUnits> odd = MakeTimerUnits(Request("2026-12-24 10:00"));
  ASSERT_TRUE(odd.ok());
  EXPECT_TRUE(absl::StartsWith(odd->crontab, "# OnCalendar"));
}

TEST(TimerUnitsTest, BadNamesAndSpecsAreRefused) {
  TimerRequest request = Request("daily");
  request.job = "../x";
  EXPECT_FALSE(MakeTimerUnits(request).ok());
  EXPECT_FALSE(MakeTimerUnits(Request("")).ok());
  EXPECT_FALSE(MakeTimerUnits(Request("daily\nExecStart=/bin/sh")).ok());
}

// systemd's own check of the written units, where it is installed.
// Control: the same units with a calendar systemd cannot read fail it.
TEST(TimerUnitsTest, SystemdAnalyzeVerifiesTheUnits) {
  constexpr char kAnalyze[] = "/usr/bin/systemd-analyze";
  if (::access(kAnalyze, X_OK) != 0) GTEST_SKIP() << "no systemd-analyze";
  for (bool good : {true, false}) {
    TimerRequest request = Request(good ? "Mon..Fri 03:00" : "bogus spec");
    request.checkout = garuda::testing::NewTempDir("timer");
    absl::StatusOr<TimerUnits> units = MakeTimerUnits(request);
    ASSERT_TRUE(units.ok()) << units.status();
    const std::string folder = request.checkout + "/units";
    absl::StatusOr<std::string> timer = WriteTimerUnits(*units, folder);
    ASSERT_TRUE(timer.ok()) << timer.status();
    absl::StatusOr<ProgramRun> verified =
        RunProgram({kAnalyze, "verify", *timer,
                    JoinPath(folder, units->name + ".service")},
                   -1, 2);
    ASSERT_TRUE(verified.ok()) << verified.status();
    if (good) {
      EXPECT_EQ(verified->exit_code, 0);
    } else {
      EXPECT_NE(verified->exit_code, 0);
    }
  }
}

}  // namespace
}  // namespace jobs
}  // namespace garuda
