// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include "diagnose/test_builder.h"

namespace gpumon::diagnose {
namespace {

using namespace testing;

TEST(Hang, NoProgressUntilTheEnd) {
  RunData run;
  add_gpu(run, 0, 3000);              // 300 s of samples, 100% busy (a stuck collective)
  add_rank(run, 10, 0, 1, 500, 0.2);  // steps stop after 100 s
  const auto d = run_diagnose(run);
  const auto* f = find(d, "hang");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_NEAR(evidence(*f, "gap_s"), 200, 0.5);
  EXPECT_EQ(evidence(*f, "at_end"), 1);
  EXPECT_EQ(f->ranks, std::vector<std::int64_t>{0});
}

TEST(Hang, StallInsideTheRunThatResumed) {
  RunData run;
  add_gpu(run, 0, 3000);
  add_rank(run, 10, 0, 1, 1000, 0.2, [](training::Step& s, int i) {
    if (i >= 500) s.t_start_s += 90, s.t_end_s += 90;
  });
  const auto diagnosis = run_diagnose(run);
  const auto* f = find(diagnosis, "hang");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
}

TEST(Hang, NearMissShortPause) {
  // A 25 s checkpoint: under the 30 s floor.
  RunData run;
  add_gpu(run, 0, 2600);
  add_rank(run, 10, 0, 1, 1200, 0.2, [](training::Step& s, int i) {
    if (i >= 500) s.t_start_s += 25, s.t_end_s += 25;
  });
  EXPECT_EQ(find(run_diagnose(run), "hang", Severity::kInfo), nullptr);
}

TEST(Hang, LongStepsNeedLongerGaps) {
  // 5 s steps: a 95 s gap is 19 periods, not a hang.
  RunData run;
  add_gpu(run, 0, 7900);
  add_rank(run, 10, 0, 1, 140, 5, [](training::Step& s, int i) {
    if (i >= 70) s.t_start_s += 90, s.t_end_s += 90;
  });
  EXPECT_EQ(find(run_diagnose(run), "hang", Severity::kInfo), nullptr);
}

TEST(Hang, ARankThatSaidByeFinished) {
  RunData run;
  add_gpu(run, 0, 3000);
  add_rank(run, 10, 0, 1, 500, 0.2);
  run.rank_events.push_back({kT0Ms + 100500, 10, 0, "bye", "{}"});
  EXPECT_EQ(find(run_diagnose(run), "hang", Severity::kInfo), nullptr);
}

TEST(Hang, KilledWhileSilentNeedsLessThanTheFloor) {
  // The real planted DDP hangs: ms steps, then ~58 s in the last all-reduce until killed
  // (disconnect without a bye): past the 20 s floor of a rank that never resumed.
  RunData run;
  add_gpu(run, 0, 1000);
  add_rank(run, 10, 0, 2, 20000, 0.002);  // 40 s
  run.rank_events.push_back({kT0Ms + 40000 + 58000, 10, 0, "disconnect", "{}"});
  const auto d = run_diagnose(run);
  const auto* f = find(d, "hang");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_NEAR(evidence(*f, "gap_s"), 58, 0.5);
  EXPECT_EQ(evidence(*f, "died_silent"), 1);
}

TEST(Hang, StillConnectedSilenceKeepsTheFullFloor) {
  // 28 s at the end of the data, the rank still connected (a live window during a
  // checkpoint): under the 30 s floor; 32 s is a hang, reported live within half a minute.
  RunData run;
  add_gpu(run, 0, 680);
  add_rank(run, 10, 0, 1, 20000, 0.002);
  EXPECT_EQ(find(run_diagnose(run), "hang", Severity::kInfo), nullptr);
  RunData later;
  add_gpu(later, 0, 720);
  add_rank(later, 10, 0, 1, 20000, 0.002);
  const auto d = run_diagnose(later);
  const auto* f = find(d, "hang");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->severity, Severity::kCritical);
}

TEST(Hang, StoppedWithCtrlCAfterASilence) {
  // Every rank left with a goodbye after Ctrl-C (KeyboardInterrupt), 28 s after the last step:
  // judged by progress, not by how it left.
  RunData run;
  add_gpu(run, 0, 700);
  add_rank(run, 10, 0, 1, 20000, 0.002);  // 40 s
  run.rank_events.push_back({kT0Ms + 40000 + 27900, 10, 0, "error",
                             R"({"type":"error","exception":"KeyboardInterrupt"})"});
  run.rank_events.push_back({kT0Ms + 40000 + 28000, 10, 0, "bye", "{}"});
  const auto d = run_diagnose(run);
  const auto* f = find(d, "hang");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_NEAR(evidence(*f, "gap_s"), 28, 0.5);
  EXPECT_NE(f->summary.find("KeyboardInterrupt"), std::string::npos) << f->summary;
  const auto* stopped = find(d, "run_interrupted", Severity::kInfo);
  ASSERT_NE(stopped, nullptr);
  EXPECT_EQ(stopped->deduction, 0);
  EXPECT_EQ(find(d, "run_failed", Severity::kInfo), nullptr);
}

TEST(Hang, CommandKilledAfterASilence) {
  // The ranks said bye (atexit on SIGTERM) but the command ended on a signal.
  RunData run;
  add_gpu(run, 0, 700);
  add_rank(run, 10, 0, 1, 20000, 0.002);
  run.rank_events.push_back({kT0Ms + 40000 + 25000, 10, 0, "bye", "{}"});
  run.command_end = CommandEnd{143, "SIGTERM", std::nullopt};
  const auto d = run_diagnose(run);
  const auto* f = find(d, "hang");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->severity, Severity::kCritical);
}

TEST(Hang, ALongSilenceBeforeACleanExitIsAWarning) {
  // A final evaluation of 40 s, then a goodbye and exit status 0.
  RunData run;
  add_gpu(run, 0, 800);
  add_rank(run, 10, 0, 1, 20000, 0.002);
  run.rank_events.push_back({kT0Ms + 40000 + 40000, 10, 0, "bye", "{}"});
  run.command_end = CommandEnd{0, "", std::nullopt};
  const auto d = run_diagnose(run);
  const auto* f = find(d, "hang");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_EQ(f->title, "Training stopped early");
  // Under the limit before a clean exit: nothing.
  RunData brief;
  add_gpu(brief, 0, 800);
  add_rank(brief, 10, 0, 1, 20000, 0.002);
  brief.rank_events.push_back({kT0Ms + 40000 + 25000, 10, 0, "bye", "{}"});
  EXPECT_EQ(find(run_diagnose(brief), "hang", Severity::kInfo), nullptr);
}

TEST(Hang, NearMissKilledSoonAfterTheLastStep) {
  RunData run;
  add_gpu(run, 0, 420);
  add_rank(run, 10, 0, 1, 20000, 0.002);
  run.rank_events.push_back({kT0Ms + 40000 + 15000, 10, 0, "disconnect", "{}"});
  EXPECT_EQ(find(run_diagnose(run), "hang", Severity::kInfo), nullptr);
}

}  // namespace
}  // namespace gpumon::diagnose
