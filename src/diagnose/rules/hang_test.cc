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
  // A 40 s checkpoint: under the 60 s floor.
  RunData run;
  add_gpu(run, 0, 3000);
  add_rank(run, 10, 0, 1, 1200, 0.2, [](training::Step& s, int i) {
    if (i >= 500) s.t_start_s += 40, s.t_end_s += 40;
  });
  EXPECT_EQ(find(run_diagnose(run), "hang", Severity::kInfo), nullptr);
}

TEST(Hang, LongStepsNeedLongerGaps) {
  // 20 s steps: a 100 s gap is 5 periods, not a hang.
  RunData run;
  add_gpu(run, 0, 30000);
  add_rank(run, 10, 0, 1, 140, 20, [](training::Step& s, int i) {
    if (i >= 70) s.t_start_s += 80, s.t_end_s += 80;
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
  // The same 58 s at the end of the data, the rank still connected (a live window during a
  // checkpoint): under the 60 s floor.
  RunData run;
  add_gpu(run, 0, 980);
  add_rank(run, 10, 0, 1, 20000, 0.002);
  EXPECT_EQ(find(run_diagnose(run), "hang", Severity::kInfo), nullptr);
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
