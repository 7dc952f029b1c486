// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include "diagnose/test_builder.h"

namespace gpumon::diagnose {
namespace {

using namespace testing;

TEST(IdleGpu, SecondGpuIdleInDdp) {
  // world size 2, both ranks on GPU 0 (the classic mistake): GPU 1 idles.
  RunData run;
  add_gpu(run, 0, 1200);
  add_gpu(run, 1, 1200, 100,
          [](GpuPoint& p, int) { p.util_pct = 0, p.sm_active = 0, p.mem_used_bytes = 0.5 * kGiB; });
  add_rank(run, 10, 0, 2, 1000, 0.1);
  add_rank(run, 11, 0, 2, 1000, 0.1, [](record::RecordedStep& s, int) { s.rank = 1; });
  const auto d = run_diagnose(run);
  const auto* f = find(d, "idle_gpu");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->gpus, std::vector<unsigned>{1});
  EXPECT_EQ(evidence(*f, "world_size"), 2);
}

TEST(IdleGpu, SingleProcessOnAMultiGpuMachineIsInfo) {
  RunData run;
  add_gpu(run, 0, 1200);
  add_gpu(run, 1, 1200, 100, [](GpuPoint& p, int) { p.util_pct = 0; });
  add_rank(run, 10, 0, 1, 1000, 0.1);
  const auto d = run_diagnose(run);
  EXPECT_EQ(find(d, "idle_gpu"), nullptr) << warnings(d);
  EXPECT_NE(find(d, "idle_gpu", Severity::kInfo), nullptr);
}

TEST(IdleGpu, NearMissLightlyUsed) {
  RunData run;
  add_gpu(run, 0, 1200);
  add_gpu(run, 1, 1200, 100, [](GpuPoint& p, int) { p.util_pct = 12; });
  add_rank(run, 10, 0, 2, 1000, 0.1);
  add_rank(run, 11, 0, 2, 1000, 0.1, [](record::RecordedStep& s, int) { s.rank = 1; });
  EXPECT_EQ(find(run_diagnose(run), "idle_gpu", Severity::kInfo), nullptr);
}

TEST(Imbalance, UtilizationDiffers) {
  RunData run;
  add_gpu(run, 0, 1200);
  add_gpu(run, 1, 1200, 100, [](GpuPoint& p, int) { p.util_pct = 45; });
  EXPECT_NE(find(run_diagnose(run), "imbalance", Severity::kInfo), nullptr) << "no steps: info";
  add_rank(run, 10, 0, 2, 1000, 0.1, [](record::RecordedStep& s, int) { s.gpu_step_s.reset(); });
  add_rank(run, 11, 1, 2, 1000, 0.1, [](record::RecordedStep& s, int) { s.gpu_step_s.reset(); });
  const auto d = run_diagnose(run);
  const auto* f = find(d, "imbalance");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->gpus, (std::vector<unsigned>{0, 1}));
  EXPECT_NEAR(evidence(*f, "util_gap_pct"), 50, 1e-9);
}

TEST(Imbalance, NearMissSmallDifference) {
  RunData run;
  add_gpu(run, 0, 1200);
  add_gpu(run, 1, 1200, 100, [](GpuPoint& p, int) { p.util_pct = 80; });
  EXPECT_EQ(find(run_diagnose(run), "imbalance"), nullptr);
}

TEST(Imbalance, Memory) {
  RunData run;
  add_gpu(run, 0, 1200);
  add_gpu(run, 1, 1200, 100, [](GpuPoint& p, int) { p.mem_used_bytes = 70 * kGiB; });
  add_rank(run, 10, 0, 2, 1000, 0.1);
  add_rank(run, 11, 1, 2, 1000, 0.1);
  EXPECT_NE(find(run_diagnose(run), "imbalance"), nullptr);
}

TEST(Straggler, DataLoaderOfOneRank) {
  RunData run;
  add_gpu(run, 0, 1200);
  add_gpu(run, 1, 1200);
  add_rank(run, 10, 0, 2, 1000, 0.1, [](record::RecordedStep& s, int) { s.gpu_step_s.reset(); });
  add_rank(run, 11, 1, 2, 1000, 0.1, [](record::RecordedStep& s, int) {
    s.gpu_step_s.reset();
    s.data_wait_s = 0.03;
  });
  const auto d = run_diagnose(run);
  const auto* f = find(d, "straggler");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->ranks, std::vector<std::int64_t>{1});
  EXPECT_EQ(f->gpus, std::vector<unsigned>{1});
  EXPECT_NE(f->summary.find("data loader"), std::string::npos);
}

TEST(Straggler, ThrottledGpuNamedAsCause) {
  RunData run;
  add_gpu(run, 0, 1200);
  add_gpu(run, 1, 1200, 100,
          [](GpuPoint& p, int) { p.clock_reasons = 0x20, p.sm_clock_mhz = 1200; });
  add_rank(run, 10, 0, 2, 1000, 0.1, [](record::RecordedStep& s, int) { s.gpu_step_s = 0.06; });
  add_rank(run, 11, 1, 2, 1000, 0.1, [](record::RecordedStep& s, int) { s.gpu_step_s = 0.095; });
  const auto diagnosis = run_diagnose(run);
  const auto* f = find(diagnosis, "straggler");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->summary.find("throttled"), std::string::npos);
}

TEST(Straggler, NearMissInconsistent) {
  // Rank 1 is 30% slower but only every other step: not "consistently".
  RunData run;
  add_gpu(run, 0, 1200);
  add_gpu(run, 1, 1200);
  add_rank(run, 10, 0, 2, 1000, 0.1,
           [](record::RecordedStep& s, int i) { s.cpu_step_s = i % 2 ? 0.13 : 0.1; });
  add_rank(run, 11, 1, 2, 1000, 0.1,
           [](record::RecordedStep& s, int i) { s.cpu_step_s = i % 2 ? 0.1 : 0.13; });
  EXPECT_EQ(find(run_diagnose(run), "straggler"), nullptr);
}

}  // namespace
}  // namespace gpumon::diagnose
