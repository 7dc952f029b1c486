// SPDX-License-Identifier: MIT
// What a diagnosis could not judge, and findings about GPUs the run does not use.
#include "diagnose/coverage.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "diagnose/test_builder.h"
#include "diagnose/throttle.h"
#include "training/protocol.h"

namespace gpumon::diagnose {
namespace {

using namespace testing;

bool lists(const Diagnosis& d, const std::string& check_part, const std::string& reason_part) {
  for (const auto& n : d.not_judged)
    if (n.check.find(check_part) != std::string::npos &&
        n.reason.find(reason_part) != std::string::npos)
      return true;
  return false;
}

// GPU 0 busy and power-capped all the time (another job's); a rank beside it.
RunData throttled_gpu_beside(const char* device) {
  RunData run;
  add_gpu(run, 0, 600, 100,
          [](GpuPoint& p, int) { p.clock_reasons = kClockEventSwPowerCap, p.sm_clock_mhz = 1400; });
  add_rank(run, 10, 0, 1, 600, 0.1);
  run.rank_events.push_back(training::rank_event(
      kT0Ms + 1, 10, 0, "device", std::string(R"({"type":"hello","device":")") + device + "\"}"));
  for (auto& s : run.steps) s.device = device;
  return run;
}

// A loop that never timed a batch fetch: its steps' data wait is unknown. A stall of 40 % of
// every step is then not seen, the GPU idle 70 % of each step is not called host-bound (it may
// be the loader), and the diagnosis says both were not judged, and how to judge them.
TEST(Coverage, ADataWaitNotMeasuredIsNotJudgedNotHealthy) {
  RunData run;
  add_gpu(run, 0, 1200);
  add_rank(run, 10, 0, 1, 1000, 0.05, [](training::Step& s, int) {
    s.data_wait_s = std::nullopt;
    s.gpu_step_s = 0.3 * s.cpu_step_s;
  });
  const auto d = run_diagnose(run);
  EXPECT_EQ(find(d, "data_loader_stall"), nullptr);
  EXPECT_EQ(find(d, "launch_bound"), nullptr);
  EXPECT_TRUE(lists(d, "data_loader_stall, launch_bound on rank 0", "mon.wrap(loader)"))
      << warnings(d);
  // Measured from step 500 on (the loader wrapped later): judged on those steps alone.
  RunData later;
  add_gpu(later, 0, 1200);
  add_rank(later, 10, 0, 1, 1000, 0.05, [](training::Step& s, int i) {
    if (i < 500) s.data_wait_s = std::nullopt;
    s.gpu_step_s = 0.3 * s.cpu_step_s;
  });
  const auto d2 = run_diagnose(later);
  EXPECT_NE(find(d2, "launch_bound"), nullptr) << warnings(d2);
  EXPECT_FALSE(lists(d2, "data_loader_stall", "data wait not measured"));
}

TEST(Coverage, AGpuNoRankUsesIsTheMachinesStateAndCostsNoPoints) {
  auto cpu = throttled_gpu_beside("cpu");
  const auto d = run_diagnose(cpu);
  const auto* f = find(d, "throttled");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_TRUE(f->machine);
  EXPECT_EQ(f->deduction, 0);
  EXPECT_EQ(d.health_score, 100);
  EXPECT_TRUE(lists(d, "launch_bound", "the ranks run on the CPU"));
  // The same GPU under the run's own rank costs points.
  auto gpu = throttled_gpu_beside("cuda:0");
  const auto d2 = run_diagnose(gpu);
  const auto* g = find(d2, "throttled");
  ASSERT_NE(g, nullptr);
  EXPECT_FALSE(g->machine);
  EXPECT_GT(g->deduction, 0);
}

TEST(Coverage, ARankOfUnknownDeviceKeepsEveryGpuTheRuns) {
  RunData run;
  add_gpu(run, 0, 600, 100,
          [](GpuPoint& p, int) { p.clock_reasons = kClockEventSwPowerCap, p.sm_clock_mhz = 1400; });
  add_gpu(run, 1, 600);
  add_rank(run, 10, 0, 1, 600, 0.1);
  run.rank_events.clear();  // no hello: the device is unknown
  for (auto& s : run.steps) s.device.reset();
  const auto d = run_diagnose(run);
  const auto* f = find(d, "throttled");
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->machine) << "not known to be another job's";
  EXPECT_TRUE(lists(d, "GPU-side checks", "device unknown"));
}

TEST(Coverage, WhatCouldNotRunIsListed) {
  RunData no_mem;
  add_gpu(no_mem, 0, 600);
  add_rank(no_mem, 10, 0, 1, 600, 0.1,
           [](training::Step& s, int) { s.allocated_bytes.reset(), s.gpu_step_s.reset(); });
  const auto d = run_diagnose(no_mem);
  EXPECT_TRUE(lists(d, "memory_leak", "no allocator stats"));
  EXPECT_TRUE(lists(d, "rank_wait", "no GPU step time"));
  RunData short_run;
  add_gpu(short_run, 0, 30);
  add_rank(short_run, 10, 0, 1, 15, 0.2);
  EXPECT_TRUE(lists(run_diagnose(short_run), "step_pauses", "run too short"));
  RunData gpus_only;
  add_gpu(gpus_only, 0, 600);
  const auto d3 = run_diagnose(gpus_only);
  EXPECT_TRUE(lists(d3, "data_loader_stall", "no training steps"));
  EXPECT_FALSE(lists(d3, "throttled", "")) << "the GPUs were sampled";
  // Without the node's process samples: host memory and CPU time.
  RunData unsampled;
  add_gpu(unsampled, 0, 600);
  add_rank(unsampled, 10, 0, 1, 600, 0.1);
  EXPECT_TRUE(lists(run_diagnose(unsampled), "host_memory_leak", "no process samples"));
  // ... and ranks connected for less than the node's one-second reading period say so.
  RunData brief;
  add_gpu(brief, 0, 30);
  add_rank(brief, 10, 0, 1, 30, 0.02);
  brief.rank_events.push_back(training::rank_event(kT0Ms, 10, 0, "hello", R"({"type":"hello"})"));
  brief.rank_events.push_back(training::rank_event(kT0Ms + 660, 10, 0, "bye", R"({"type":"bye"})"));
  EXPECT_TRUE(lists(run_diagnose(brief), "host_memory_leak", "connected for 0.7 s"));
  // A healthy, fully measured run lists nothing.
  RunData full;
  add_gpu(full, 0, 600);
  add_rank(full, 10, 0, 1, 600, 0.1);
  for (int i = 0; i < 60; ++i) {
    training::ProcessSample p;
    p.time_ms = kT0Ms + i * 1000, p.pid = 10, p.rank = 0, p.cpu_s = i;
    p.pss_bytes = p.rss_bytes = 1LL << 30;
    full.process_samples.push_back(p);
  }
  const auto d4 = run_diagnose(full);
  EXPECT_TRUE(d4.not_judged.empty()) << d4.not_judged.front().check;
}

TEST(Coverage, TheJsonAndTextSayIt) {
  auto cpu = throttled_gpu_beside("cpu");
  const auto d = run_diagnose(cpu);
  const auto j = to_json(d, "run.gpumon");
  ASSERT_FALSE(j["not_judged"].empty());
  EXPECT_TRUE(j["not_judged"][0].contains("reason"));
  EXPECT_EQ(j["findings"][0]["scope"], "machine");
  const std::string text = render_text(d, "run.gpumon");
  EXPECT_NE(text.find("not judged (the score does not cover these)"), std::string::npos);
  EXPECT_NE(text.find("the machine, not this run"), std::string::npos);
}

}  // namespace
}  // namespace gpumon::diagnose
