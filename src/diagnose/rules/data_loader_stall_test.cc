// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include "diagnose/test_builder.h"

namespace gpumon::diagnose {
namespace {

using namespace testing;

RunData with_wait(double share, double step_s = 0.1) {
  RunData run;
  add_gpu(run, 0, 600, 100, [](GpuPoint& p, int i) { p.util_pct = i % 2 ? 90 : 20; });
  add_rank(run, 10, 0, 1, 500, step_s, [&](training::Step& s, int) {
    s.data_wait_s = share * step_s;
    s.gpu_step_s = (1 - share) * step_s;
  });
  return run;
}

TEST(DataLoaderStall, FoundWithEvidence) {
  auto run = with_wait(0.4);
  const auto d = run_diagnose(run);
  const auto* f = find(d, "data_loader_stall");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NEAR(evidence(*f, "data_wait_share"), 0.4, 1e-9);
  EXPECT_NEAR(evidence(*f, "mean_data_wait_ms"), 40, 1e-6);
  EXPECT_EQ(f->gpus, std::vector<unsigned>{0});
  EXPECT_EQ(f->ranks, std::vector<std::int64_t>{0});
  EXPECT_GT(f->deduction, 0);
  EXPECT_LT(d.health_score, 100);
  EXPECT_EQ(find(d, "launch_bound"), nullptr) << "waiting for data is not launch-bound";
}

TEST(DataLoaderStall, CriticalWhenTheGpuWaitsMoreThanItWorks) {
  auto run = with_wait(0.7);
  EXPECT_EQ(find(run_diagnose(run), "data_loader_stall")->severity, Severity::kCritical);
}

TEST(DataLoaderStall, NearMissBelowShare) {
  auto run = with_wait(0.15);
  EXPECT_EQ(find(run_diagnose(run), "data_loader_stall"), nullptr);
}

TEST(DataLoaderStall, NearMissTinySteps) {
  // 30% of a 5 ms step is 1.5 ms: below the absolute floor.
  auto run = with_wait(0.3, 0.005);
  EXPECT_EQ(find(run_diagnose(run), "data_loader_stall"), nullptr);
}

TEST(DataLoaderStall, WarmupIsIgnored) {
  auto run = with_wait(0.01);
  for (auto& s : run.steps)
    if (s.step < 10) s.data_wait_s = 0.09;  // the loader's first batches
  EXPECT_EQ(find(run_diagnose(run), "data_loader_stall"), nullptr);
}

TEST(DataLoaderStall, TooFewSteps) {
  auto run = with_wait(0.5);
  run.steps.resize(25);
  EXPECT_EQ(find(run_diagnose(run), "data_loader_stall"), nullptr);
}

}  // namespace
}  // namespace gpumon::diagnose
