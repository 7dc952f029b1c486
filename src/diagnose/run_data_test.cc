// SPDX-License-Identifier: MIT
#include "diagnose/run_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "diagnose/diagnosis.h"
#include "diagnose/run_data_loader.h"
#include "diagnose/test_builder.h"
#include "training/protocol.h"

namespace gpumon::diagnose {
namespace {

using namespace testing;

RankInfo only_rank(RunData& run) {
  finish_run_data(run);
  EXPECT_EQ(run.ranks.size(), 1u);
  return run.ranks.at(0);
}

TEST(RunData, RankMappedByPciBusId) {
  RunData run;
  add_gpu(run, 0, 1);
  add_gpu(run, 1, 1);
  run.rank_events.push_back(training::rank_event(
      kT0Ms, 5, 0, "hello", R"({"device":"cuda:0","pci_bus_id":"0000:01:00.0"})"));
  const auto r = only_rank(run);
  EXPECT_EQ(r.gpu, 1u);
  EXPECT_EQ(r.gpu_mapped_by, "pci_bus_id");
}

TEST(RunData, RankMappedByVisibleDeviceUuidOnly) {
  RunData run;
  add_gpu(run, 0, 1);
  add_gpu(run, 1, 1);
  run.rank_events.push_back(training::rank_event(
      kT0Ms, 5, 0, "hello",
      R"({"device":"cuda:1","cuda_visible_devices":"GPU-00000000, GPU-00000001"})"));
  EXPECT_EQ(only_rank(run).gpu, 1u);
  // Integers are in CUDA's order: not guessed.
  RunData run2;
  add_gpu(run2, 0, 1);
  add_gpu(run2, 1, 1);
  run2.rank_events.push_back(training::rank_event(
      kT0Ms, 5, 0, "hello", R"({"device":"cuda:0","cuda_visible_devices":"1"})"));
  EXPECT_EQ(only_rank(run2).gpu, std::nullopt);
}

TEST(RunData, RankMappedByNvmlProcessesOrSingleGpu) {
  RunData run;
  add_gpu(run, 0, 1);
  add_gpu(run, 1, 1);
  run.rank_events.push_back(training::rank_event(kT0Ms, 5, 0, "hello", R"({"device":"cuda:0"})"));
  run.processes.push_back({0, 5, "python", 500 << 20, {}, kT0Ms, kT0Ms, {}});
  run.processes.push_back({1, 5, "python", 9LL << 30, {}, kT0Ms, kT0Ms, {}});
  EXPECT_EQ(only_rank(run).gpu, 1u);
  RunData single;
  add_gpu(single, 4, 1);
  single.rank_events.push_back(training::rank_event(kT0Ms, 5, 0, "hello", "not json"));
  EXPECT_EQ(only_rank(single).gpu, std::nullopt) << "no device named: not guessed";
  single.rank_events.push_back(
      training::rank_event(kT0Ms + 10, 5, 0, "device", R"({"device":"cuda:0"})"));
  EXPECT_EQ(only_rank(single).gpu, 4u) << "the device it named later";
}

TEST(RunData, ByeAndDisconnect) {
  RunData run;
  run.rank_events.push_back(training::rank_event(kT0Ms, 5, 0, "hello", "{}"));
  run.rank_events.push_back({kT0Ms + 10, 5, 0, "bye", "{}"});
  const auto r = only_rank(run);
  EXPECT_EQ(r.bye_ms, kT0Ms + 10);
  EXPECT_EQ(run.start_ms, kT0Ms);
  EXPECT_EQ(run.end_ms, kT0Ms + 10);
}

#ifdef GPUMON_TESTDATA_DIR
TEST(RunDataLoader, RealH200RecordingIsHealthy) {
  auto loaded = load_run_data(GPUMON_TESTDATA_DIR "/recordings/h200-gemm-10hz.gpumon");
  ASSERT_TRUE(std::holds_alternative<RunData>(loaded)) << std::get<std::string>(loaded);
  auto& run = std::get<RunData>(loaded);
  ASSERT_FALSE(run.gpus.empty());
  ASSERT_FALSE(run.gpus[0].points.empty());
  const auto d = diagnose(run);
  EXPECT_EQ(warnings(d), "");
  EXPECT_EQ(d.health_score, 100);
}

TEST(RunDataLoader, OldSamplesBecomeBucketsThatKeepTheCounts) {
  const std::string path = GPUMON_TESTDATA_DIR "/recordings/h200-gemm-10hz.gpumon";
  const auto full = std::get<RunData>(load_run_data(path));
  const auto capped = std::get<RunData>(load_run_data(path, {100, 10}));
  ASSERT_EQ(full.gpus.size(), capped.gpus.size());
  for (std::size_t i = 0; i < full.gpus.size(); ++i) {
    std::int64_t a = 0, b = 0;
    for (const auto& p : full.gpus[i].points) a += p.samples;
    for (const auto& p : capped.gpus[i].points) b += p.samples;
    EXPECT_EQ(a, b);
    EXPECT_LE(capped.gpus[i].points.size(), 100u + 12u);
    EXPECT_EQ(capped.gpus[i].points.back().t_ms, full.gpus[i].points.back().t_ms);
  }
  EXPECT_EQ(warnings(diagnose(capped)), "");
}

TEST(RunDataLoader, StepsThinnedPastTheLimitStayAlignedAndKeepEachTail) {
  // The real 2-rank DDP run: 10,649 steps per rank (rank 1 does 2x the work).
  const std::string path = GPUMON_TESTDATA_DIR "/recordings/planted-imbalance.gpumon";
  const auto full = std::get<RunData>(load_run_data(path));
  LoadLimits limits;
  limits.max_steps = 1000, limits.tail_steps = 100;
  const auto thin = std::get<RunData>(load_run_data(path, limits));
  ASSERT_EQ(full.steps.size(), 2 * 10649u);
  EXPECT_LE(thin.steps.size(), limits.max_steps + 2 * limits.tail_steps);
  EXPECT_GE(thin.steps.size(), limits.max_steps / 2);
  std::map<std::int64_t, std::set<std::int64_t>> by_pid;
  for (std::size_t i = 0; i < thin.steps.size(); ++i) {
    by_pid[thin.steps[i].pid].insert(thin.steps[i].step);
    if (i) {
      EXPECT_LE(thin.steps[i - 1].t_end_s, thin.steps[i].t_end_s);
    }
  }
  ASSERT_EQ(by_pid.size(), 2u);
  EXPECT_EQ(by_pid.begin()->second, by_pid.rbegin()->second) << "the same step numbers";
  EXPECT_EQ(*by_pid.begin()->second.rbegin(), 10648) << "the tail is kept";
  EXPECT_EQ(by_pid.begin()->second.count(10648 - 99), 1u);
  // The rules see the same run.
  const auto d = diagnose(thin);
  const auto it = std::find_if(d.findings.begin(), d.findings.end(),
                               [](const Finding& f) { return f.id == "straggler"; });
  ASSERT_NE(it, d.findings.end());
  EXPECT_EQ(it->ranks, std::vector<std::int64_t>{1});
}

TEST(RunDataLoader, MissingFileIsAMessage) {
  const auto r = load_run_data("/nonexistent/run.gpumon");
  ASSERT_TRUE(std::holds_alternative<std::string>(r));
  EXPECT_NE(std::get<std::string>(r).find("run.gpumon"), std::string::npos);
}
#endif

}  // namespace
}  // namespace gpumon::diagnose
