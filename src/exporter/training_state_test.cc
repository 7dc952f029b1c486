// SPDX-License-Identifier: MIT
// TrainingState: the agent's sinks feeding it from one thread while snapshots read it; time is a
// FakeClock.
#include "exporter/training_state.h"

#include <gtest/gtest.h>

#include <thread>

#include "sampler/testing/fake_clock.h"
#include "training/protocol.h"

namespace gpumon::exporter {
namespace {

using std::chrono::seconds;

training::RankEvent hello(std::int64_t pid, std::optional<std::int64_t> rank,
                          const std::string& json) {
  return training::rank_event(0, pid, rank, "hello", json);
}

// Step n of a loop whose steps end 1 s apart (the process's own clock).
training::Step step(std::int64_t pid, std::int64_t n, double cpu_s, double wait_s,
                    double t_end_s = 0) {
  training::Step s;
  s.pid = pid;
  s.step = n;
  s.cpu_step_s = cpu_s;
  s.data_wait_s = wait_s;
  s.t_end_s = t_end_s != 0 ? t_end_s : 1764446400.0 + static_cast<double>(n);
  s.t_start_s = s.t_end_s - cpu_s;
  return s;
}

DeviceStatic device(unsigned index, const std::string& bus) {
  DeviceStatic d;
  d.index = index;
  d.pci_bus_id = bus;
  return d;
}

struct ExporterStateTraining : ::testing::Test {
  std::shared_ptr<gpumon::testing::FakeClock> clock =
      std::make_shared<gpumon::testing::FakeClock>();
  TrainingState state{clock};
};

TEST_F(ExporterStateTraining, SumsStepsAndKeepsTheNewestAllocatorFigures) {
  state.on_rank_event(hello(10, 1,
                            R"({"type":"hello","pid":10,"rank":1,"local_rank":1,)"
                            R"("world_size":2,"device":"cuda:1"})"));
  training::Step a = step(10, 0, 0.5, 0.1);
  a.gpu_step_s = 0.4;
  a.allocated_bytes = 100;
  a.num_ooms = 0;
  state.on_step(a);
  clock->advance(seconds(1));
  training::Step b = step(10, 1, 0.25, 0.05);  // no allocator figures: the old ones stay
  b.received_ms = 1764446401500;
  state.on_step(b);
  clock->advance(seconds(2));

  const TrainingSnapshot snap = state.snapshot({});
  ASSERT_EQ(snap.ranks.size(), 1U);
  const TrainingRank& r = snap.ranks[0];
  EXPECT_EQ(r.rank, 1);
  EXPECT_EQ(r.local_rank, 1);
  EXPECT_EQ(r.world_size, 2);
  EXPECT_EQ(r.device, "cuda:1");
  EXPECT_EQ(r.steps, 2U);
  EXPECT_EQ(r.last_step, 1);
  EXPECT_DOUBLE_EQ(r.step_seconds_sum, 0.75);
  // 0.5 s lands in the le="0.5" bucket (a bound counts in its bucket), 0.25 s in le="0.25".
  std::array<std::uint64_t, kStepSecondsBuckets.size() + 1> buckets{};
  buckets[5] = buckets[6] = 1;
  EXPECT_EQ(r.step_seconds_buckets, buckets);
  EXPECT_EQ(r.last_step_unix_s, 1764446401.5);
  EXPECT_EQ(r.last_step_seconds, 0.25);
  EXPECT_DOUBLE_EQ(*r.data_wait_seconds_sum, 0.15000000000000002);
  EXPECT_EQ(r.gpu_steps, 1U);
  EXPECT_EQ(r.last_gpu_step_seconds, 0.4);
  EXPECT_EQ(r.allocated_bytes, 100);
  EXPECT_EQ(r.ooms, 0);
  EXPECT_FALSE(r.reserved_bytes);
  EXPECT_EQ(r.last_step_age_s, 2.0);
  EXPECT_EQ(r.steps_per_second, 1.0);  // two steps 1 s apart
  EXPECT_DOUBLE_EQ(*r.data_wait_share, 0.15 / 0.75);
  EXPECT_FALSE(r.gpu);  // no GPUs given: nothing to map to
}

TEST_F(ExporterStateTraining, CountsActionsBoundedAndKeepsTheNewestState) {
  state.on_rank_event(hello(10, 0, R"({"type":"hello","pid":10,"rank":0})"));
  auto action = [&](std::int64_t pid, const std::string& body) {
    state.on_rank_event(
        training::rank_event(0, pid, 0, "action", R"({"type":"action",)" + body + "}"));
  };
  action(10, R"("action":"oom_split","micro_batch_size":16)");
  action(10, R"("action":"oom_split","micro_batch_size":8)");
  action(10, R"("action":"loader_retuned","num_workers":4)");
  action(10, R"("action":"loader_limited")");  // no worker count: the newest stays
  action(10, R"("action":"oom_split","micro_batch_size":"x")");  // not an action: ignored
  action(99, R"("action":"oom_split","micro_batch_size":2)");    // no hello: ignored
  for (int i = 0; i < 30; ++i)
    action(10, R"("action":"new_kind_)" + std::string(1, 'a' + i % 26) +
                   std::string(i / 26 + 1, 'x') + "\"");
  const auto snap = state.snapshot({});
  ASSERT_EQ(snap.ranks.size(), 1U);
  const auto& r = snap.ranks[0];
  EXPECT_EQ(r.actions.at("oom_split"), 2U);
  EXPECT_EQ(r.actions.at("loader_retuned"), 1U);
  EXPECT_EQ(r.micro_batch_size, 8);
  EXPECT_EQ(r.loader_workers, 4);
  EXPECT_EQ(r.actions.size(), TrainingState::kMaxActionNames + 1) << "16 names and \"other\"";
  EXPECT_EQ(r.actions.at("other"), 30U - (TrainingState::kMaxActionNames - 3));
}

TEST_F(ExporterStateTraining, NoStepAgeOrRateBeforeSteps) {
  state.on_rank_event(hello(10, 0, "{}"));
  const TrainingRank r = state.snapshot({}).ranks.at(0);
  EXPECT_EQ(r.steps, 0U);
  EXPECT_FALSE(r.last_step_age_s);
  EXPECT_FALSE(r.steps_per_second);
  EXPECT_TRUE(r.connected);
}

TEST_F(ExporterStateTraining, TheRateComesFromTheStepsOwnTimesNotFromBatchedArrivals) {
  state.on_rank_event(hello(10, 0, "{}"));
  // A 4 ms loop whose client hands 250 steps over at once, every second.
  for (int batch = 0; batch < 3; ++batch) {
    for (int i = 0; i < 250; ++i) {
      const int n = batch * 250 + i;
      state.on_step(step(10, n, 0.004, 0, 1764446400.0 + 0.004 * n));
    }
    clock->advance(seconds(1));
  }
  const auto r = state.snapshot({}).ranks.at(0);
  ASSERT_TRUE(r.steps_per_second);
  EXPECT_NEAR(*r.steps_per_second, 250.0, 0.5);
}

TEST_F(ExporterStateTraining, MapsThePciBusIdToTheNvmlIndex) {
  state.on_rank_event(hello(10, 0, R"({"pci_bus_id":"0000:1B:00.0"})"));
  state.on_rank_event(hello(11, 1, R"({"pci_bus_id":"0000:99:00.0"})"));
  const auto snap = state.snapshot({device(0, "00000000:18:00.0"), device(1, "00000000:1b:00.0")});
  EXPECT_EQ(snap.ranks.at(0).gpu, 1U);
  EXPECT_FALSE(snap.ranks.at(1).gpu);  // no such device: the label is left out
}

TEST_F(ExporterStateTraining, ADisconnectedRankStaysFiveMinutesThenGoes) {
  state.on_rank_event(hello(10, 0, "{}"));
  state.on_step(step(10, 0, 0.1, 0));
  state.on_rank_event({0, 10, 0, "bye", "{}"});
  clock->advance(seconds(299));
  auto snap = state.snapshot({});
  ASSERT_EQ(snap.ranks.size(), 1U);
  EXPECT_FALSE(snap.ranks[0].connected);
  EXPECT_EQ(snap.ranks[0].disconnected_for_s, 299.0);
  clock->advance(seconds(2));
  EXPECT_TRUE(state.snapshot({}).ranks.empty());
}

TEST_F(ExporterStateTraining, ARankThatLeavesWithoutAByeIsLost) {
  state.on_rank_event(hello(10, 0, "{}"));
  state.on_rank_event(hello(11, 1, "{}"));
  state.on_rank_event({0, 10, 0, "bye", "{}"});
  state.on_rank_event({0, 10, 0, "disconnect", "{}"});  // the socket closes after the bye
  state.on_rank_event({0, 11, 1, "disconnect", "{}"});  // killed: no bye
  const auto snap = state.snapshot({});
  ASSERT_EQ(snap.ranks.size(), 2U);
  EXPECT_FALSE(snap.ranks[0].lost);
  EXPECT_TRUE(snap.ranks[1].lost);
}

TEST_F(ExporterStateTraining, AReusedPidStartsAfresh) {
  state.on_rank_event(hello(10, 0, "{}"));
  state.on_step(step(10, 0, 0.1, 0));
  state.on_rank_event({0, 10, 0, "disconnect", "{}"});
  state.on_rank_event(hello(10, 3, "{}"));
  const TrainingRank r = state.snapshot({}).ranks.at(0);
  EXPECT_EQ(r.rank, 3);
  EXPECT_EQ(r.steps, 0U);
  EXPECT_TRUE(r.connected);
}

TEST_F(ExporterStateTraining, BoundedAtMaxRanksEvictingTheLongestDisconnected) {
  for (std::int64_t pid = 1; pid <= static_cast<std::int64_t>(TrainingState::kMaxRanks); ++pid)
    state.on_rank_event(hello(pid, pid, "{}"));
  state.on_rank_event(hello(5000, 0, "{}"));  // all connected: ignored, counted
  auto snap = state.snapshot({});
  EXPECT_EQ(snap.ranks.size(), TrainingState::kMaxRanks);
  EXPECT_EQ(snap.untracked, 1U);
  state.on_rank_event({0, 7, 7, "bye", "{}"});
  clock->advance(seconds(1));
  state.on_rank_event({0, 8, 8, "bye", "{}"});
  state.on_rank_event(hello(5001, 0, "{}"));  // evicts pid 7, the longest gone
  snap = state.snapshot({});
  EXPECT_EQ(snap.ranks.size(), TrainingState::kMaxRanks);
  bool has7 = false, has8 = false, has5001 = false;
  for (const auto& r : snap.ranks) {
    has7 |= r.pid == 7;
    has8 |= r.pid == 8;
    has5001 |= r.pid == 5001;
  }
  EXPECT_FALSE(has7);
  EXPECT_TRUE(has8);
  EXPECT_TRUE(has5001);
}

TEST_F(ExporterStateTraining, BadHelloJsonKeepsTheRankFromTheEvent) {
  state.on_rank_event(hello(10, 2, "not json"));
  const TrainingRank r = state.snapshot({}).ranks.at(0);
  EXPECT_EQ(r.rank, 2);
  EXPECT_FALSE(r.local_rank);
}

TEST_F(ExporterStateTraining, GenerationGrowsWithEveryChange) {
  const auto g0 = state.generation();
  state.on_rank_event(hello(10, 0, "{}"));
  const auto g1 = state.generation();
  state.on_step(step(10, 0, 0.1, 0));
  EXPECT_LT(g0, g1);
  EXPECT_LT(g1, state.generation());
}

// The agent thread feeds while HTTP threads snapshot (run under TSan by scripts/test.sh).
TEST_F(ExporterStateTraining, FeedAndSnapshotFromDifferentThreads) {
  std::thread feeder([&] {
    for (int pid = 1; pid <= 8; ++pid) state.on_rank_event(hello(pid, pid - 1, "{}"));
    for (int n = 0; n < 2000; ++n) state.on_step(step(1 + n % 8, n / 8, 0.01, 0.001));
    for (int pid = 1; pid <= 8; ++pid) state.on_rank_event({0, pid, pid - 1, "bye", "{}"});
  });
  std::thread reader([&] {
    for (int i = 0; i < 200; ++i) (void)state.snapshot({device(0, "00000000:18:00.0")});
  });
  feeder.join();
  reader.join();
  std::uint64_t total = 0;
  for (const auto& r : state.snapshot({}).ranks) total += r.steps;
  EXPECT_EQ(total, 2000U);
}

}  // namespace
}  // namespace gpumon::exporter
