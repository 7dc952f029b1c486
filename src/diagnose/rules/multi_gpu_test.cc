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
  add_rank(run, 11, 0, 2, 1000, 0.1, [](training::Step& s, int) { s.rank = 1; });
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
  add_rank(run, 11, 0, 2, 1000, 0.1, [](training::Step& s, int) { s.rank = 1; });
  EXPECT_EQ(find(run_diagnose(run), "idle_gpu", Severity::kInfo), nullptr);
}

TEST(Imbalance, UtilizationDiffers) {
  RunData run;
  add_gpu(run, 0, 1200);
  add_gpu(run, 1, 1200, 100, [](GpuPoint& p, int) { p.util_pct = 45; });
  EXPECT_NE(find(run_diagnose(run), "imbalance", Severity::kInfo), nullptr) << "no steps: info";
  add_rank(run, 10, 0, 2, 1000, 0.1, [](training::Step& s, int) { s.gpu_step_s.reset(); });
  add_rank(run, 11, 1, 2, 1000, 0.1, [](training::Step& s, int) { s.gpu_step_s.reset(); });
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
  const auto d = run_diagnose(run);
  const auto* f = find(d, "imbalance");
  ASSERT_NE(f, nullptr);
  // Seed 000's per-card memory advice, with the run's numbers: which GPU holds how much.
  EXPECT_EQ(evidence(*f, "most_memory_gpu"), 1);
  EXPECT_NE(f->summary.find("memory (GPU 1 holds 70.00 GiB, GPU 0 40.00 GiB)"), std::string::npos)
      << f->summary;
  EXPECT_NE(f->advice.find("torch.cuda.set_device(local_rank)"), std::string::npos) << f->advice;
  EXPECT_NE(f->advice.find("DistributedSampler"), std::string::npos) << f->advice;
}

TEST(Straggler, DataLoaderOfOneRank) {
  RunData run;
  add_gpu(run, 0, 1200);
  add_gpu(run, 1, 1200);
  add_rank(run, 10, 0, 2, 1000, 0.1, [](training::Step& s, int) { s.gpu_step_s.reset(); });
  add_rank(run, 11, 1, 2, 1000, 0.1, [](training::Step& s, int) {
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
  add_rank(run, 10, 0, 2, 1000, 0.1, [](training::Step& s, int) { s.gpu_step_s = 0.06; });
  add_rank(run, 11, 1, 2, 1000, 0.1, [](training::Step& s, int) { s.gpu_step_s = 0.095; });
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
           [](training::Step& s, int i) { s.cpu_step_s = i % 2 ? 0.13 : 0.1; });
  add_rank(run, 11, 1, 2, 1000, 0.1,
           [](training::Step& s, int i) { s.cpu_step_s = i % 2 ? 0.1 : 0.13; });
  EXPECT_EQ(find(run_diagnose(run), "straggler"), nullptr);
}

// A process without RANK/WORLD_SIZE (a plain script), its steps shifted by `offset_s`.
void add_rankless(RunData& run, std::int64_t pid, int n, double step_s, double offset_s,
                  double step_factor = 1) {
  add_rank(run, pid, 0, 1, n, step_s, [&](training::Step& s, int) {
    s.rank.reset(), s.world_size.reset(), s.local_rank.reset();
    s.t_start_s += offset_s, s.t_end_s = s.t_start_s + step_s * step_factor;
    s.cpu_step_s *= step_factor, *s.gpu_step_s *= step_factor;
  });
  run.rank_events.back().rank.reset();
}

TEST(Straggler, ProcessesOneAfterAnotherAreNotRanks) {
  // oom-h200: three scripts run one after the other on GPU 0; the last has longer steps.
  RunData run;
  add_gpu(run, 0, 1200);
  add_rankless(run, 1744, 100, 0.1, 0);
  add_rankless(run, 1767, 100, 0.1, 20);
  add_rankless(run, 1794, 100, 0.1, 40, 1.5);
  const auto d = run_diagnose(run);
  EXPECT_EQ(find(d, "straggler", Severity::kInfo), nullptr) << warnings(d);
  EXPECT_EQ(find(d, "imbalance", Severity::kInfo), nullptr) << warnings(d);
}

TEST(Straggler, RanklessProcessesAreListedByPid) {
  RunData run;
  add_gpu(run, 0, 600);
  add_rankless(run, 1834, 300, 0.2, 0);
  run.rank_events.push_back({kT0Ms + 30000, 1834, std::nullopt, "oom", R"({"type":"oom"})"});
  const auto d = run_diagnose(run);
  const auto* f = find(d, "oom");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_TRUE(f->ranks.empty());
  EXPECT_EQ(f->pids, std::vector<std::int64_t>{1834});
  EXPECT_NE(render_text(d, "r.gpumon").find("pids: 1834"), std::string::npos);
}

TEST(Straggler, LockStepRanksByGpuActivity) {
  // planted-imbalance: rank 1 does 2x the GEMMs, then both all-reduce; a plain mon.step() makes
  // every step time equal and NCCL keeps both GPUs "busy"; GPM shows who computes.
  RunData run;
  add_gpu(run, 0, 400, 100, [](GpuPoint& p, int) { p.util_pct = 88, p.sm_active = 0.42; });
  add_gpu(run, 1, 400, 100, [](GpuPoint& p, int) { p.util_pct = 88, p.sm_active = 0.79; });
  for (int r = 0; r < 2; ++r)
    add_rank(run, 10 + r, r, 2, 10000, 0.004,
             [](training::Step& s, int) { s.gpu_step_s = s.cpu_step_s; });
  const auto d = run_diagnose(run);
  const auto* f = find(d, "straggler");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->ranks, std::vector<std::int64_t>{1});
  EXPECT_NEAR(evidence(*f, "ratio_vs_others"), 0.79 / 0.42, 1e-6);
}

TEST(Straggler, NearMissLockStepRanksAlike) {
  // planted-ddp-healthy: SM activity 0.65 and 0.68.
  RunData run;
  add_gpu(run, 0, 400, 100, [](GpuPoint& p, int) { p.sm_active = 0.65; });
  add_gpu(run, 1, 400, 100, [](GpuPoint& p, int) { p.sm_active = 0.68; });
  for (int r = 0; r < 2; ++r)
    add_rank(run, 10 + r, r, 2, 10000, 0.004,
             [](training::Step& s, int) { s.gpu_step_s = s.cpu_step_s; });
  const auto d = run_diagnose(run);
  EXPECT_EQ(find(d, "straggler", Severity::kInfo), nullptr) << warnings(d);
  EXPECT_EQ(find(d, "imbalance", Severity::kInfo), nullptr) << warnings(d);
}

TEST(IdleGpu, ShortRunWithManyStepsIsJudged) {
  // planted-idle-gpu: 25 s of 2 ms steps on GPU 0 of a 2-GPU machine, no RANK: info.
  RunData run;
  add_gpu(run, 0, 260);
  add_gpu(run, 1, 260, 100, [](GpuPoint& p, int) { p.util_pct = 0, p.sm_active = 0; });
  add_rankless(run, 1630, 12500, 0.002, 0);
  const auto d = run_diagnose(run);
  const auto* f = find(d, "idle_gpu", Severity::kInfo);
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_EQ(f->gpus, std::vector<unsigned>{1});
}

TEST(IdleGpu, NearMissShortRunWithFewSteps) {
  // 25 s of 0.25 s steps: 100 steps is not yet the run's shape.
  RunData run;
  add_gpu(run, 0, 260);
  add_gpu(run, 1, 260, 100, [](GpuPoint& p, int) { p.util_pct = 0; });
  add_rank(run, 10, 0, 2, 100, 0.25);
  EXPECT_EQ(find(run_diagnose(run), "idle_gpu", Severity::kInfo), nullptr);
}

}  // namespace
}  // namespace gpumon::diagnose
