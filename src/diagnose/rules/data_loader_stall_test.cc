// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <cmath>

#include "diagnose/test_builder.h"
#include "training/protocol.h"

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

TEST(DataLoaderStall, EveryStepWaitingIsToldFromAFewLongWaits) {
  auto even = with_wait(0.4);
  const auto d = run_diagnose(even);
  const auto* f = find(d, "data_loader_stall");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->summary.find("every step waits (median 40.0 ms)"), std::string::npos) << f->summary;
  EXPECT_NE(f->advice.find("num_workers"), std::string::npos);
  EXPECT_NE(f->advice.find("pin_memory"), std::string::npos);
  // 2 % of the steps wait 1 s, the others nothing.
  RunData bursty;
  add_gpu(bursty, 0, 1000);
  add_rank(bursty, 10, 0, 1, 1000, 0.05, [](training::Step& s, int i) {
    s.data_wait_s = i % 50 == 0 ? 1.0 : 0.0;
    s.cpu_step_s += *s.data_wait_s;
  });
  const auto d2 = run_diagnose(bursty);
  const auto* g = find(d2, "data_loader_stall");
  ASSERT_NE(g, nullptr) << warnings(d2);
  EXPECT_NE(g->summary.find("a few long waits"), std::string::npos) << g->summary;
  EXPECT_NEAR(evidence(*g, "slowest_5pct_wait_share"), 1.0, 1e-9);
  EXPECT_NE(g->advice.find("prefetch the next shard"), std::string::npos);
}

TEST(DataLoaderStall, ACpuRunIsNotToldToFeedTheGpu) {
  auto run = with_wait(0.4);
  for (auto& s : run.steps) s.device = "cpu", s.gpu_step_s.reset();
  run.rank_events.push_back(  // it named the CPU after its hello
      training::rank_event(kT0Ms + 1, 10, 0, "device", R"({"type":"hello","device":"cpu"})"));
  const auto d = run_diagnose(run);
  const auto* f = find(d, "data_loader_stall");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->advice.find("GPU"), std::string::npos) << f->advice;
  EXPECT_EQ(f->advice.find("pin_memory"), std::string::npos) << f->advice;
}

// Seed 000's advice (num_workers=8, prefetch_factor=4, pin_memory=True) with the run's own
// numbers: 3 workers behind a 100 ms step load a batch each in 300 ms, against 60 ms of compute:
// 300 / 60 x 1.5 = 7.5, so num_workers=8.
TEST(DataLoaderStall, AdviceNamesTheWorkersThatWouldKeepUp) {
  auto run = with_wait(0.4);
  for (int i = 0; i <= 50; ++i) {
    training::ProcessSample p;
    p.time_ms = kT0Ms + i * 1000;
    p.pid = 10;
    p.workers = 3;
    run.process_samples.push_back(p);
  }
  const auto d = run_diagnose(run);
  const auto* f = find(d, "data_loader_stall");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(evidence(*f, "num_workers_seen"), 3);
  EXPECT_NEAR(evidence(*f, "load_ms_per_batch"), 300, 1e-6);
  EXPECT_EQ(evidence(*f, "suggested_num_workers"), 8);
  EXPECT_NE(f->advice.find("it loaded with num_workers 3"), std::string::npos) << f->advice;
  EXPECT_NE(f->advice.find("num_workers=8, prefetch_factor=4, pin_memory=True"), std::string::npos)
      << f->advice;
  EXPECT_NE(f->advice.find("mon.wrap(loader, adapt=True)"), std::string::npos);
  // Without process samples the wait is taken as in-process loading: at least 2 workers.
  auto bare = with_wait(0.4);
  const auto d2 = run_diagnose(bare);
  const auto* g = find(d2, "data_loader_stall");
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(std::isnan(evidence(*g, "num_workers_seen")));
  EXPECT_EQ(evidence(*g, "suggested_num_workers"), 2);
  EXPECT_NE(g->advice.find("gpumon did not see its worker processes"), std::string::npos);
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
