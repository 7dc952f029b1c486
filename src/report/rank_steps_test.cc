// SPDX-License-Identifier: MIT
// rank_steps: per-rank series on the grid, the GPU each rank maps to and the step axis.
#include "report/rank_steps.h"

#include <gtest/gtest.h>

#include <cmath>

#include "training/protocol.h"

namespace gpumon::report {
namespace {

constexpr std::int64_t kStartMs = 1764446400000;

training::Step step(std::int64_t pid, std::optional<std::int64_t> rank, std::int64_t n,
                    double start_s, double len_s, std::string device = "cuda:0") {
  training::Step s;
  s.pid = pid;
  s.rank = rank;
  s.device = std::move(device);
  s.step = n;
  s.t_start_s = static_cast<double>(kStartMs) / 1000 + start_s;
  s.t_end_s = s.t_start_s + len_s;
  s.cpu_step_s = len_s;
  s.data_wait_s = len_s / 4;
  s.allocated_bytes = (n + 1) * (1LL << 30);
  s.reserved_bytes = 8LL << 30;
  return s;
}

record::RecordedDevice gpu(unsigned index, std::string bus) {
  record::RecordedDevice d;
  d.index = index;
  d.pci_bus_id = std::move(bus);
  return d;
}

training::RankEvent hello(std::int64_t pid, std::string json) {
  return training::rank_event(kStartMs, pid, std::nullopt, "hello", std::move(json));
}

// 10 buckets of 1 s from kStartMs.
TimeGrid grid() {
  return {kStartMs, 1000, 10};
}

TEST(RankSteps, OneSeriesPerRankAndItsGpuFromTheHello) {
  std::vector<training::Step> steps;
  for (int i = 0; i < 10; ++i) {
    steps.push_back(step(200, 1, i, i * 1.0, 1.0));  // rank 1 first on purpose
    steps.push_back(step(100, 0, i, i * 1.0, 0.5));
  }
  const std::vector<record::RecordedDevice> devices{gpu(0, "00000000:18:00.0"),
                                                    gpu(1, "00000000:2A:00.0")};
  const auto ranks =
      rank_steps(steps, {hello(200, R"({"device":"cuda:0","pci_bus_id":"0000:2a:00.0"})")}, devices,
                 {}, grid());
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0].rank, 0);  // ordered by rank
  EXPECT_FALSE(ranks[0].gpu.gpu) << "no hello, two GPUs: unmapped, not guessed";
  EXPECT_EQ(ranks[1].gpu.gpu, 1u) << ranks[1].gpu.why;
  EXPECT_EQ(ranks[1].label(), "rank 1 (pid 200, cuda:0)");
  EXPECT_EQ(ranks[0].steps, 10);
  EXPECT_EQ(ranks[0].last_step, 9);
  // Rank 0's step 3 ends at 3.5 s: bucket 3 holds it alone.
  EXPECT_DOUBLE_EQ(*ranks[0].step_time_s.at(3).mean(), 0.5);
  EXPECT_DOUBLE_EQ(*ranks[0].data_wait_s_series.at(3).mean(), 0.125);
  EXPECT_DOUBLE_EQ(*ranks[0].allocated_gib.at(3).mean(), 4.0);
  EXPECT_DOUBLE_EQ(*ranks[0].reserved_gib.at(3).mean(), 8.0);
}

TEST(RankSteps, StepAxisIsTheStepInProgressAtEachBucketsMiddle) {
  std::vector<training::Step> steps;
  for (int i = 0; i < 4; ++i) steps.push_back(step(1, 0, 10 + i, 2.0 * i, 2.0));  // 2 s steps
  const auto r = rank_steps(steps, {}, {}, {}, grid()).at(0);
  ASSERT_EQ(r.step_at.size(), 10u);
  EXPECT_DOUBLE_EQ(r.step_at[0], 10.25);  // middle 0.5 s: a quarter into step 10
  EXPECT_DOUBLE_EQ(r.step_at[1], 10.75);
  EXPECT_DOUBLE_EQ(r.step_at[5], 12.75);
  EXPECT_DOUBLE_EQ(r.step_at[7], 13.75);
  EXPECT_TRUE(std::isnan(r.step_at[8])) << "after the last step";
}

TEST(RankSteps, StepAxisOnlyIncreasesAndSkipsPauses) {
  std::vector<training::Step> steps{step(1, 0, 5, 0, 1), step(1, 0, 6, 1, 1),
                                    step(1, 0, 0, 4, 1),  // the counter restarted
                                    step(1, 0, 7, 6, 1)};
  const auto r = rank_steps(steps, {}, {}, {}, grid()).at(0);
  EXPECT_DOUBLE_EQ(r.step_at[0], 5.5);
  EXPECT_DOUBLE_EQ(r.step_at[1], 6.5);
  EXPECT_TRUE(std::isnan(r.step_at[2])) << "between steps";
  EXPECT_TRUE(std::isnan(r.step_at[4])) << "went back to step 0";
  EXPECT_DOUBLE_EQ(r.step_at[6], 7.5);
}

TEST(RankSteps, NonFiniteStepsAreDroppedAndDevicesSplitAProcess) {
  std::vector<training::Step> steps{step(1, std::nullopt, 0, 0, 1),
                                    step(1, std::nullopt, 1, 1, 1, "cpu")};
  steps.push_back(step(1, std::nullopt, 2, 2, 1));
  steps.back().cpu_step_s = std::nan("");
  const auto ranks = rank_steps(steps, {}, {gpu(0, "0000:01:00.0")}, {}, grid());
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0].steps + ranks[1].steps, 2);
  EXPECT_EQ(ranks[0].label(), "pid 1 (cpu)");
  EXPECT_FALSE(ranks[0].gpu.gpu);
  EXPECT_EQ(ranks[1].gpu.gpu, 0u) << "the only GPU recorded";
}

TEST(RankSteps, AxisRankPrefersTheDriverThenRankZeroThenTheMostSteps) {
  std::vector<RankSteps> ranks(3);
  ranks[0].rank = 1, ranks[0].steps = 50, ranks[0].gpu.gpu = 1;
  ranks[1].rank = 0, ranks[1].steps = 10;
  ranks[2].rank = 2, ranks[2].steps = 90;
  auto a = axis_rank(ranks, 1u);
  EXPECT_EQ(a->index, 0u);
  EXPECT_TRUE(a->drives);
  a = axis_rank(ranks, 3u);
  EXPECT_EQ(a->index, 1u);
  EXPECT_FALSE(a->drives);
  ranks[1].rank = 5;
  EXPECT_EQ(axis_rank(ranks, 3u)->index, 2u);
  EXPECT_FALSE(axis_rank({}, 0u));
}

TEST(RankSteps, ActionsGiveStepFunctionsOfTheirOwnProcessOnly) {
  std::vector<training::Step> steps;
  for (int i = 0; i < 8; ++i) steps.push_back(step(10, 0, i, 1 + i, 1));
  for (int i = 0; i < 8; ++i) steps.push_back(step(20, 1, i, 1 + i, 1, "cuda:1"));
  auto ranks = rank_steps(steps, {}, {}, {}, grid());
  ASSERT_EQ(ranks.size(), 2U);
  const auto actions = action_events(
      {training::rank_event(kStartMs + 5500, 10, 0, "action",
                            R"({"action":"loader_retuned","num_workers":2})"),
       training::rank_event(kStartMs + 3500, 10, 0, "action",
                            R"({"action":"oom_split","micro_batch_size":8,)"
                            R"("previous_micro_batch_size":16})"),
       training::rank_event(kStartMs + 4000, 10, 0, "oom", R"({"step":3})"),
       training::rank_event(kStartMs + 4000, 10, 0, "action", R"({"action":"Not-One"})")});
  ASSERT_EQ(actions.size(), 2U) << "only the actions that parse";
  EXPECT_EQ(actions[0].action.action, "oom_split") << "in time order";
  add_actions(ranks, actions, grid());
  const auto& r = ranks[0];
  ASSERT_EQ(r.micro_batch_size.size(), 10U);
  EXPECT_TRUE(std::isnan(r.micro_batch_size[0])) << "before the rank's first step";
  EXPECT_EQ(r.micro_batch_size[1], 16) << "the size the first split replaced";
  EXPECT_EQ(r.micro_batch_size[2], 16);
  EXPECT_EQ(r.micro_batch_size[3], 8);
  EXPECT_EQ(r.micro_batch_size[9], 8);
  ASSERT_EQ(r.loader_workers.size(), 10U);
  EXPECT_TRUE(std::isnan(r.loader_workers[4])) << "no previous worker count: unknown";
  EXPECT_EQ(r.loader_workers[5], 2);
  EXPECT_TRUE(ranks[1].micro_batch_size.empty() && ranks[1].loader_workers.empty());
}

}  // namespace
}  // namespace gpumon::report
