// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include "diagnose/test_builder.h"

namespace gpumon::diagnose {
namespace {

using namespace testing;

// A CPU job (no GPU time) of `world` ranks in lock-step (0.3 s steps), sampled once a second;
// rank r uses `cores[r]` CPU cores.
RunData cpu_job(const std::vector<double>& cores, int steps = 200) {
  RunData run;
  const auto world = static_cast<std::int64_t>(cores.size());
  for (std::int64_t r = 0; r < world; ++r) {
    add_rank(run, 100 + r, r, world, steps, 0.3, [](training::Step& s, int) {
      s.gpu_step_s.reset(), s.allocated_bytes.reset(), s.reserved_bytes.reset();
      s.device = "cpu";
    });
    for (int i = 0; i <= steps * 3 / 10; ++i) {
      training::ProcessSample p;
      p.time_ms = kT0Ms + i * 1000, p.pid = 100 + r, p.rank = r;
      p.cpu_s = cores[static_cast<std::size_t>(r)] * i + 0.01 * ((i * 31) % 3);  // tick noise
      p.pss_bytes = static_cast<std::int64_t>(kGiB);
      run.process_samples.push_back(p);
    }
  }
  return run;
}

TEST(CpuStraggler, TheRankDoingThreeTimesTheWorkIsNamed) {
  RunData run = cpu_job({0.3, 0.9});
  const auto d = run_diagnose(run);
  const auto* f = find(d, "cpu_straggler");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->ranks, std::vector<std::int64_t>{1});
  EXPECT_NEAR(evidence(*f, "ratio_vs_others"), 3, 0.2);
  EXPECT_GE(evidence(*f, "most_cpu_share"), 0.9);
  EXPECT_EQ(find(d, "straggler"), nullptr) << "the step times are equal";
}

TEST(CpuStraggler, FourRanksOneSlow) {
  RunData run = cpu_job({0.5, 0.5, 1.0, 0.5});
  const auto d = run_diagnose(run);
  const auto* f = find(d, "cpu_straggler");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->ranks, std::vector<std::int64_t>{2});
}

TEST(CpuStraggler, NearMissEvenWork) {
  RunData run = cpu_job({0.9, 0.95});
  EXPECT_EQ(find(run_diagnose(run), "cpu_straggler"), nullptr);
}

TEST(CpuStraggler, NearMissIdleRanks) {
  // Ranks waiting on I/O: 3x of almost nothing says nothing about speed.
  RunData run = cpu_job({0.02, 0.06});
  EXPECT_EQ(find(run_diagnose(run), "cpu_straggler"), nullptr);
}

TEST(CpuStraggler, NotWithoutOneJob) {
  RunData run = cpu_job({0.3, 0.9});
  for (auto& s : run.steps) s.world_size.reset(), s.rank.reset();
  for (auto& e : run.rank_events) {
    e.rank.reset();
    if (e.hello) e.hello->rank.reset(), e.hello->world_size.reset();
  }
  EXPECT_EQ(find(run_diagnose(run), "cpu_straggler"), nullptr);
}

TEST(CpuStraggler, NotWhenTheStepTimesNameTheStraggler) {
  // Ranks that do not synchronise: rank 1's steps are longer, `straggler` names it.
  RunData run = cpu_job({0.3, 0.9});
  for (auto& s : run.steps)
    if (s.rank == 1) s.cpu_step_s *= 3;
  const auto d = run_diagnose(run);
  EXPECT_NE(find(d, "straggler"), nullptr) << warnings(d);
  EXPECT_EQ(find(d, "cpu_straggler"), nullptr);
}

}  // namespace
}  // namespace gpumon::diagnose
