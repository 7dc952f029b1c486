// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include "diagnose/test_builder.h"

namespace gpumon::diagnose {
namespace {

using namespace testing;

// Two ranks in lock-step (same step time); their GPU times as given, per step with `jitter`
// deciding which rank is slowest in a step.
RunData lockstep(double gpu0, double gpu1, bool alternate) {
  RunData run;
  add_gpu(run, 0, 1200);
  add_gpu(run, 1, 1200);
  add_rank(run, 10, 0, 2, 1000, 0.1,
           [&](training::Step& s, int i) { s.gpu_step_s = alternate && i % 2 ? gpu1 : gpu0; });
  add_rank(run, 11, 1, 2, 1000, 0.1,
           [&](training::Step& s, int i) { s.gpu_step_s = alternate && i % 2 ? gpu0 : gpu1; });
  return run;
}

TEST(RankWait, NoConsistentStragglerIsAWarning) {
  // Ranks 1 and 2 take turns being slowest; rank 0 always waits.
  RunData run;
  for (unsigned g = 0; g < 3; ++g) add_gpu(run, g, 1200);
  add_rank(run, 10, 0, 3, 1000, 0.1, [](training::Step& s, int) { s.gpu_step_s = 0.03; });
  add_rank(run, 11, 1, 3, 1000, 0.1,
           [](training::Step& s, int i) { s.gpu_step_s = i % 2 ? 0.09 : 0.085; });
  add_rank(run, 12, 2, 3, 1000, 0.1,
           [](training::Step& s, int i) { s.gpu_step_s = i % 2 ? 0.085 : 0.09; });
  const auto d = run_diagnose(run);
  const auto* f = find(d, "rank_wait");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->ranks, std::vector<std::int64_t>{0});
  EXPECT_EQ(find(d, "straggler"), nullptr);
}

TEST(RankWait, RotatingSlowRankIsNotLaunchBound) {
  // Each step one rank (in turn) computes 0.30 s, the others 0.14 s and wait: every GPU is
  // half idle at the median, but some GPU is busy the whole step.
  RunData run;
  for (unsigned g = 0; g < 4; ++g) add_gpu(run, g, 1200);
  for (int r = 0; r < 4; ++r)
    add_rank(run, 10 + r, r, 4, 400, 0.31,
             [r](training::Step& s, int i) { s.gpu_step_s = i % 4 == r ? 0.30 : 0.14; });
  const auto d = run_diagnose(run);
  const auto* f = find(d, "rank_wait");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->ranks, (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(find(d, "launch_bound"), nullptr);
  EXPECT_EQ(find(d, "straggler"), nullptr);
}

TEST(RankWait, FastRankWaitsOnSlowOne) {
  auto run = lockstep(0.03, 0.09, false);
  const auto d = run_diagnose(run);
  const auto* f = find(d, "rank_wait", Severity::kInfo);
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->ranks, std::vector<std::int64_t>{0});
  EXPECT_NEAR(evidence(*f, "gpu_time_vs_slowest"), 1.0 / 3, 1e-6);
  // One rank slower in every step: the straggler finding carries it, rank_wait is info.
  EXPECT_EQ(f->severity, Severity::kInfo);
  const auto* s = find(d, "straggler");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->ranks, std::vector<std::int64_t>{1});
}

TEST(RankWait, NearMissSmallDifference) {
  auto run = lockstep(0.08, 0.09, false);  // x1.125: under the straggler factor
  const auto d = run_diagnose(run);
  EXPECT_EQ(find(d, "rank_wait", Severity::kInfo), nullptr);
  EXPECT_EQ(warnings(d), "");
}

TEST(RankWait, UnsynchronisedRanksDoNotWait) {
  RunData run;
  add_gpu(run, 0, 1200);
  add_gpu(run, 1, 1200);
  add_rank(run, 10, 0, 2, 1000, 0.05);
  add_rank(run, 11, 1, 2, 500, 0.1);
  EXPECT_EQ(find(run_diagnose(run), "rank_wait", Severity::kInfo), nullptr);
}

}  // namespace
}  // namespace gpumon::diagnose
