// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include "diagnose/test_builder.h"

namespace gpumon::diagnose {
namespace {

using namespace testing;

TEST(LaunchBound, GpuTimeFarBelowStepTime) {
  RunData run;
  add_gpu(run, 0, 1200);
  add_rank(run, 10, 0, 1, 1000, 0.05,
           [](training::Step& s, int) { s.gpu_step_s = 0.3 * s.cpu_step_s; });
  const auto d = run_diagnose(run);
  const auto* f = find(d, "launch_bound");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_NEAR(evidence(*f, "gpu_time_share"), 0.3, 1e-9);
  EXPECT_EQ(f->ranks, std::vector<std::int64_t>{0});
}

TEST(LaunchBound, NearMissHalfBusy) {
  RunData run;
  add_gpu(run, 0, 1200);
  add_rank(run, 10, 0, 1, 1000, 0.05,
           [](training::Step& s, int) { s.gpu_step_s = 0.55 * s.cpu_step_s; });
  EXPECT_EQ(find(run_diagnose(run), "launch_bound"), nullptr);
}

TEST(LaunchBound, BusyByNvmlIdleByGpm) {
  RunData run;
  add_gpu(run, 0, 3000, 100, [](GpuPoint& p, int) { p.util_pct = 85, p.sm_active = 0.1; });
  const auto d = run_diagnose(run);
  const auto* f = find(d, "launch_bound");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_NEAR(evidence(*f, "sm_active_while_busy"), 0.1, 1e-9);
  EXPECT_EQ(f->gpus, std::vector<unsigned>{0});
}

TEST(LaunchBound, NearMissSmActiveAboveThreshold) {
  RunData run;
  add_gpu(run, 0, 3000, 100, [](GpuPoint& p, int) { p.util_pct = 85, p.sm_active = 0.3; });
  EXPECT_EQ(find(run_diagnose(run), "launch_bound"), nullptr);
}

TEST(LaunchBound, WithoutGpmOrGpuTimeNothingIsClaimed) {
  RunData run;
  add_gpu(run, 0, 3000, 100, [](GpuPoint& p, int) { p.sm_active.reset(); });
  add_rank(run, 10, 0, 1, 1000, 0.05, [](training::Step& s, int) { s.gpu_step_s.reset(); });
  EXPECT_EQ(find(run_diagnose(run), "launch_bound"), nullptr);
}

TEST(LaunchBound, NotWhenAnotherRankIsBusy) {
  // Rank 1 computes; rank 0 waits for it: rank_wait / straggler, not launch-bound.
  RunData run;
  add_gpu(run, 0, 1200);
  add_gpu(run, 1, 1200);
  add_rank(run, 10, 0, 2, 1000, 0.1, [](training::Step& s, int) { s.gpu_step_s = 0.03; });
  add_rank(run, 11, 1, 2, 1000, 0.1, [](training::Step& s, int) { s.gpu_step_s = 0.09; });
  EXPECT_EQ(find(run_diagnose(run), "launch_bound"), nullptr);
}

// A plain mon.step(): GPU time spans the whole step, so only NVML utilization shows the idle
// GPU (the real planted-launch-bound run: ~12% busy, 10 ms steps, 1% data wait).
void add_plain_timed_rank(RunData& run, int n, double step_s) {
  add_rank(run, 10, 0, 1, n, step_s, [](training::Step& s, int) { s.gpu_step_s = s.cpu_step_s; });
}

TEST(LaunchBound, PlainTimingGpuMostlyIdle) {
  RunData run;
  add_gpu(run, 0, 300, 100, [](GpuPoint& p, int) { p.util_pct = 15, p.sm_active = 0.01; });
  add_plain_timed_rank(run, 3000, 0.01);  // 30 s
  const auto d = run_diagnose(run);
  const auto* f = find(d, "launch_bound");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_NEAR(evidence(*f, "mean_util_pct"), 15, 1e-9);
  EXPECT_NEAR(evidence(*f, "sm_active"), 0.01, 1e-9);
  EXPECT_EQ(f->gpus, std::vector<unsigned>{0});
}

TEST(LaunchBound, PlainTimingNearMissHalfBusy) {
  RunData run;
  add_gpu(run, 0, 300, 100, [](GpuPoint& p, int) { p.util_pct = 55; });
  add_plain_timed_rank(run, 3000, 0.01);
  EXPECT_EQ(find(run_diagnose(run), "launch_bound", Severity::kInfo), nullptr);
}

TEST(LaunchBound, PlainTimingTooShortToJudge) {
  // The examples: a few hundred ms-steps, 3 s in all, the GPU nearly idle.
  RunData run;
  add_gpu(run, 0, 300, 100, [](GpuPoint& p, int) { p.util_pct = 1; });
  add_plain_timed_rank(run, 300, 0.01);
  EXPECT_EQ(find(run_diagnose(run), "launch_bound", Severity::kInfo), nullptr);
}

TEST(LaunchBound, PlainTimingIdleBecauseOfDataIsNotLaunchBound) {
  RunData run;
  add_gpu(run, 0, 300, 100, [](GpuPoint& p, int) { p.util_pct = 5; });
  add_rank(run, 10, 0, 1, 3000, 0.01, [](training::Step& s, int) {
    s.gpu_step_s = s.cpu_step_s, s.data_wait_s = 0.5 * s.cpu_step_s;
  });
  EXPECT_EQ(find(run_diagnose(run), "launch_bound", Severity::kInfo), nullptr);
}

}  // namespace
}  // namespace gpumon::diagnose
