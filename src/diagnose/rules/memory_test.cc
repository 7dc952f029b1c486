// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <cmath>

#include "diagnose/test_builder.h"
#include "training/protocol.h"

namespace gpumon::diagnose {
namespace {

using namespace testing;

RunData growing(double bytes_per_step, int steps = 300) {
  RunData run;
  add_gpu(run, 0, 600);
  add_rank(run, 10, 0, 1, steps, 0.2, [&](training::Step& s, int i) {
    // Warm-up jumps, then growth with noise.
    const double warm = i < 10 ? -4 * kGiB : 0;
    const double noise = (i * 7919 % 100) * kMiB;
    s.allocated_bytes = static_cast<std::int64_t>(10 * kGiB + warm + bytes_per_step * i + noise);
    s.reserved_bytes = *s.allocated_bytes + static_cast<std::int64_t>(2 * kGiB);
  });
  return run;
}

TEST(MemoryLeak, SteadyGrowth) {
  auto run = growing(4 * kMiB);
  const auto d = run_diagnose(run);
  const auto* f = find(d, "memory_leak");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_NEAR(evidence(*f, "slope_bytes_per_step"), 4 * kMiB, 0.5 * kMiB);
  EXPECT_EQ(f->ranks, std::vector<std::int64_t>{0});
  EXPECT_EQ(find(d, "allocator_cache", Severity::kInfo), nullptr) << "a leak is not caching";
}

// Seed 000's trace_memory_growth(), done by the client (docs/python.md): its memory_captured
// actions name the files in the finding, the latest (the history dumped) winning.
TEST(MemoryLeak, NamesTheAllocatorStateTheClientCaptured) {
  auto run = growing(4 * kMiB);
  const std::string summary = R"({"type":"action","action":"memory_captured","step":120,)"
                              R"("finding":"memory_leak","summary_file":"/r/leak.txt",)"
                              R"("snapshot_file":"/r/leak.pickle")";
  run.rank_events.push_back(training::rank_event(kT0Ms + 30000, 10, 0, "action",
                                                 summary + R"(,"history_pending":true})"));
  run.rank_events.push_back(training::rank_event(kT0Ms + 35000, 10, 0, "action", summary + "}"));
  run.rank_events.push_back(training::rank_event(  // another finding's capture is not this one's
      kT0Ms + 36000, 10, 0, "action",
      R"({"type":"action","action":"memory_captured","finding":"oom_forecast",)"
      R"("summary_file":"/r/other.txt"})"));
  const auto d = run_diagnose(run);
  const auto* f = find(d, "memory_leak");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_NE(f->advice.find("allocator's state when this was found: /r/leak.txt"), std::string::npos)
      << f->advice;
  EXPECT_NE(f->advice.find("the next steps' allocations in /r/leak.pickle (open it at "
                           "https://pytorch.org/memory_viz)"),
            std::string::npos)
      << f->advice;
  EXPECT_EQ(f->advice.find("other.txt"), std::string::npos);
}

TEST(MemoryLeak, NearMissSmallGrowth) {
  auto run = growing(0.1 * kMiB);  // 30 MiB in 300 steps: rounding, not a leak
  EXPECT_EQ(find(run_diagnose(run), "memory_leak"), nullptr);
}

TEST(MemoryLeak, WarmupGrowthIsNotALeak) {
  auto run = growing(0);
  EXPECT_EQ(warnings(run_diagnose(run)), "");
}

TEST(MemoryLeak, OneSpikeIsNotALeak) {
  auto run = growing(0);
  for (auto& s : run.steps)
    if (s.step > 250) s.allocated_bytes = *s.allocated_bytes + static_cast<std::int64_t>(3 * kGiB);
  EXPECT_EQ(find(run_diagnose(run), "memory_leak"), nullptr);
}

TEST(AllocatorCache, ReservedFarAboveAllocatedButFlat) {
  RunData run;
  add_gpu(run, 0, 600);
  add_rank(run, 10, 0, 1, 300, 0.2,
           [](training::Step& s, int) { s.reserved_bytes = static_cast<std::int64_t>(30 * kGiB); });
  const auto d = run_diagnose(run);
  const auto* f = find(d, "allocator_cache", Severity::kInfo);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_EQ(f->deduction, 0);
  EXPECT_EQ(d.health_score, 100);
}

TEST(Fragmentation, InactiveSplitShare) {
  RunData run;
  add_gpu(run, 0, 600);
  add_rank(run, 10, 0, 1, 300, 0.2, [](training::Step& s, int) {
    s.reserved_bytes = static_cast<std::int64_t>(20 * kGiB);
    s.inactive_split_bytes = static_cast<std::int64_t>(7 * kGiB);
  });
  const auto d = run_diagnose(run);
  ASSERT_NE(find(d, "fragmentation"), nullptr) << warnings(d);
}

TEST(Fragmentation, AllocRetries) {
  RunData run;
  add_gpu(run, 0, 600);
  add_rank(run, 10, 0, 1, 300, 0.2, [](training::Step& s, int i) { s.num_alloc_retries = i / 50; });
  ASSERT_NE(find(run_diagnose(run), "fragmentation"), nullptr);
}

TEST(Fragmentation, NearMiss) {
  RunData run;
  add_gpu(run, 0, 600);
  add_rank(run, 10, 0, 1, 300, 0.2, [](training::Step& s, int i) {
    s.inactive_split_bytes = static_cast<std::int64_t>(2 * kGiB);  // 17% of 12 GiB
    s.num_alloc_retries = i > 200 ? 1 : 0;
  });
  EXPECT_EQ(find(run_diagnose(run), "fragmentation"), nullptr);
}

TEST(OomForecast, NvmlMemoryGrowingTowardsTotal) {
  RunData run;
  // 10 minutes at 10 Hz, 60 GiB -> 75 GiB: 5 GiB left at 25 MiB/s = ~3.4 minutes.
  add_gpu(run, 0, 6000, 100,
          [](GpuPoint& p, int i) { p.mem_used_bytes = 60 * kGiB + i * 2.56 * kMiB; });
  const auto d = run_diagnose(run);
  const auto* f = find(d, "oom_forecast");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_NEAR(evidence(*f, "minutes_to_full"), 3.4, 0.2);
  EXPECT_TRUE(f->ranks.empty());
  // A rank on that GPU is named: whose memory it is (and whom the client's capture answers).
  add_rank(run, 10, 0, 1, 300, 0.2);
  const auto d2 = run_diagnose(run);
  const auto* g = find(d2, "oom_forecast");
  ASSERT_NE(g, nullptr) << warnings(d2);
  EXPECT_EQ(g->ranks, std::vector<std::int64_t>{0});
}

TEST(OomForecast, NearMissFarAway) {
  RunData run;
  // +2 GiB in 10 minutes with 38 GiB free: 3 hours away.
  add_gpu(run, 0, 6000, 100,
          [](GpuPoint& p, int i) { p.mem_used_bytes = 40 * kGiB + i * 0.34 * kMiB; });
  EXPECT_EQ(find(run_diagnose(run), "oom_forecast"), nullptr);
}

TEST(OomForecast, StartupRampThatEnded) {
  RunData run;
  add_gpu(run, 0, 3000, 100,
          [](GpuPoint& p, int i) { p.mem_used_bytes = std::min(i, 1200) * 60 * kMiB; });
  EXPECT_EQ(find(run_diagnose(run), "oom_forecast"), nullptr);
}

TEST(OomForecast, FromAllocatedPerStep) {
  RunData run;
  add_gpu(run, 0, 600, 100, [](GpuPoint& p, int) { p.mem_used_bytes = 70 * kGiB; });
  add_rank(run, 10, 0, 1, 300, 0.2, [](training::Step& s, int i) {
    s.allocated_bytes = static_cast<std::int64_t>(50 * kGiB + i * 20 * kMiB);
  });
  const auto diagnosis = run_diagnose(run);
  const auto* f = find(diagnosis, "oom_forecast");
  ASSERT_NE(f, nullptr);
  EXPECT_GT(evidence(*f, "steps_to_full"), 0);
}

TEST(Oom, RankEvent) {
  RunData run;
  add_gpu(run, 0, 600);
  add_rank(run, 10, 0, 1, 100, 0.2);
  run.rank_events.push_back({kT0Ms + 30000, 10, 0, "oom", R"({"type":"oom"})"});
  const auto diagnosis = run_diagnose(run);
  const auto* f = find(diagnosis, "oom");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_EQ(f->gpus, std::vector<unsigned>{0});
}

TEST(ForeignMemory, OtherProcessOnTrainingGpu) {
  RunData run;
  add_gpu(run, 0, 600);
  add_rank(run, 10, 0, 1, 100, 0.2);
  run.processes.push_back(
      {0, 10, "python", static_cast<std::int64_t>(30 * kGiB), {}, kT0Ms, kT0Ms + 60000, {}});
  run.processes.push_back(
      {0, 77, "jupyter", static_cast<std::int64_t>(8 * kGiB), {}, kT0Ms, kT0Ms + 60000, {}});
  const auto d = run_diagnose(run);
  const auto* f = find(d, "foreign_memory");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(evidence(*f, "pid77_bytes"), 8 * kGiB);
}

TEST(ForeignMemory, AProcessOfTheRanksOwnJobIsNotForeign) {
  RunData run;
  add_gpu(run, 0, 600);
  add_rank(run, 10, 0, 2, 100, 0.2);
  for (auto& e : run.rank_events)  // the rank's hello names its job
    if (e.kind == "hello")
      e = training::rank_event(kT0Ms, 10, 0, "hello",
                               R"({"type":"hello","pid":10,"device":"cuda:0",)"
                               R"("pci_bus_id":"0000:00:00.0","job":{"id":"4711"}})");
  run.processes.push_back(
      {0, 10, "python", static_cast<std::int64_t>(30 * kGiB), {}, kT0Ms, kT0Ms + 60000, {}});
  // Another node's rank of the same job on this GPU (two nodes played on one machine), as the
  // node read its job; and a notebook of no job.
  job::JobIdentity same;
  same.id = "4711";
  run.processes.push_back(
      {0, 11, "python", static_cast<std::int64_t>(30 * kGiB), {}, kT0Ms, kT0Ms + 60000, same});
  run.processes.push_back(
      {0, 77, "jupyter", static_cast<std::int64_t>(8 * kGiB), {}, kT0Ms, kT0Ms + 60000, {}});
  const auto d = run_diagnose(run);
  const auto* f = find(d, "foreign_memory");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(evidence(*f, "pid77_bytes"), 8 * kGiB);
  EXPECT_TRUE(std::isnan(evidence(*f, "pid11_bytes"))) << "the job's own process is not foreign";
}

TEST(ForeignMemory, NearMissSmallOrUnmatchedPids) {
  RunData run;
  add_gpu(run, 0, 600);
  add_rank(run, 10, 0, 1, 100, 0.2);
  run.processes.push_back(
      {0, 10, "python", static_cast<std::int64_t>(30 * kGiB), {}, kT0Ms, kT0Ms + 60000, {}});
  run.processes.push_back(
      {0, 77, "nvtop", static_cast<std::int64_t>(300 * kMiB), {}, kT0Ms, kT0Ms + 60000, {}});
  EXPECT_EQ(find(run_diagnose(run), "foreign_memory"), nullptr);
  // NVML pids from another namespace: nothing matches a rank, so nothing is called foreign.
  run.processes[0].pid = 5555;
  run.processes[1].max_used_memory_bytes = static_cast<std::int64_t>(8 * kGiB);
  EXPECT_EQ(find(run_diagnose(run), "foreign_memory"), nullptr);
}

TEST(Oom, CaughtWithFragmentationIsItsEvidence) {
  // planted-fragmentation: a 1.5 GiB request fails each step under a cap, the program catches it.
  RunData run;
  add_gpu(run, 0, 600);
  add_rank(run, 10, 0, 1, 300, 0.2, [](training::Step& s, int i) {
    s.inactive_split_bytes = static_cast<std::int64_t>(5 * kGiB);
    s.num_alloc_retries = i, s.num_ooms = i;
  });
  const auto d = run_diagnose(run);
  EXPECT_EQ(find(d, "oom", Severity::kInfo), nullptr);
  const auto* f = find(d, "fragmentation");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(evidence(*f, "caught_ooms"), 289);
  EXPECT_EQ(find(d, "allocator_cache", Severity::kInfo), nullptr) << "the cache is the split";
}

TEST(Oom, CaughtWithoutFragmentationIsAWarning) {
  RunData run;
  add_gpu(run, 0, 600);
  add_rank(run, 10, 0, 1, 300, 0.2,
           [](training::Step& s, int i) { s.num_ooms = i >= 150 ? 1 : 0; });
  const auto d = run_diagnose(run);
  const auto* f = find(d, "oom");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_EQ(evidence(*f, "caught_ooms"), 1);
}

}  // namespace
}  // namespace gpumon::diagnose
