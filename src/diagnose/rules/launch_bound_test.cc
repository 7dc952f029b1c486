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
           [](record::RecordedStep& s, int) { s.gpu_step_s = 0.3 * s.cpu_step_s; });
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
           [](record::RecordedStep& s, int) { s.gpu_step_s = 0.55 * s.cpu_step_s; });
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
  add_rank(run, 10, 0, 1, 1000, 0.05, [](record::RecordedStep& s, int) { s.gpu_step_s.reset(); });
  EXPECT_EQ(find(run_diagnose(run), "launch_bound"), nullptr);
}

TEST(LaunchBound, NotWhenAnotherRankIsBusy) {
  // Rank 1 computes; rank 0 waits for it: rank_wait / straggler, not launch-bound.
  RunData run;
  add_gpu(run, 0, 1200);
  add_gpu(run, 1, 1200);
  add_rank(run, 10, 0, 2, 1000, 0.1, [](record::RecordedStep& s, int) { s.gpu_step_s = 0.03; });
  add_rank(run, 11, 1, 2, 1000, 0.1, [](record::RecordedStep& s, int) { s.gpu_step_s = 0.09; });
  EXPECT_EQ(find(run_diagnose(run), "launch_bound"), nullptr);
}

}  // namespace
}  // namespace gpumon::diagnose
