// SPDX-License-Identifier: MIT
// StepClock on its own (no agent): boundaries, deferred and scoped steps, data wait, epochs,
// allocator stats at a bounded rate, GPU time read a step later without a wait, the outbox and
// the ring of recent lines.
#include "client/step_clock.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace gpumon::client {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

std::vector<json> take(StepClock& clock) {
  std::vector<json> out;
  clock.drain([&](const std::string& line) { out.push_back(json::parse(line)); });
  return out;
}

// Events that complete only when the test says so; each records a fake GPU time.
class FakeTimer : public GpuTimer {
 public:
  int record() override {
    at_.push_back(gpu_clock);
    return static_cast<int>(at_.size()) - 1;
  }
  std::optional<double> elapsed(int from, int to) override {
    if (to > done_upto) return std::nullopt;
    return at_.at(to) - at_.at(from);
  }
  std::size_t recorded() const { return at_.size(); }
  double gpu_clock = 0;
  int done_upto = -1;  // events with an id up to this are complete

 private:
  std::vector<double> at_;
};

TEST(StepClock, PlainStepsCarryTheirTimesAndCount) {
  StepClock clock;
  std::this_thread::sleep_for(5ms);
  clock.step();
  clock.step();
  const auto out = take(clock);
  ASSERT_EQ(out.size(), 2U);
  EXPECT_EQ(out[0]["type"], "step");
  EXPECT_EQ(out[0]["step"], 0);
  EXPECT_EQ(out[1]["step"], 1);
  EXPECT_GE(out[0]["cpu_step_s"].get<double>(), 0.004);
  EXPECT_DOUBLE_EQ(out[0]["t_end"].get<double>(),
                   out[0]["t_start"].get<double>() + out[0]["cpu_step_s"].get<double>());
  EXPECT_TRUE(out[0]["gpu_step_s"].is_null());  // no timer: missing, never 0
  EXPECT_TRUE(out[0]["mem"].is_null());
  EXPECT_EQ(clock.steps(), 2);
  EXPECT_FALSE(clock.has_out());
}

TEST(StepClock, DeferredBoundaryIsEmittedByTheNextCallOrDroppedByAScopedStep) {
  StepClock clock;
  clock.step_deferred();
  EXPECT_EQ(clock.steps(), 1);    // counted ...
  EXPECT_FALSE(clock.has_out());  // ... but not sent yet
  clock.step_deferred();          // emits the first
  ASSERT_EQ(take(clock).size(), 1U);
  clock.begin_scoped();  // the second boundary was this step's start
  std::this_thread::sleep_for(3ms);
  EXPECT_TRUE(clock.end_scoped());
  EXPECT_FALSE(clock.end_scoped());  // none begun
  const auto out = take(clock);
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0]["step"], 1);
  EXPECT_GE(out[0]["cpu_step_s"].get<double>(), 0.002);
  clock.step_deferred();
  clock.finish();  // the deferred one goes out
  EXPECT_EQ(take(clock).size(), 1U);
}

TEST(StepClock, DataWaitCountsInTheStepAndStartsAgainAfterIt) {
  StepClock clock;
  const auto before = std::chrono::steady_clock::now();
  clock.fetch_begin();
  std::this_thread::sleep_for(4ms);
  clock.fetch_end();
  const std::chrono::duration<double> fetch = std::chrono::steady_clock::now() - before;
  clock.add_data_wait(0.5);
  clock.add_data_wait(-1);  // nonsense is ignored
  clock.step();
  clock.fetch_end();  // no begin: nothing
  clock.step();
  const auto out = take(clock);
  ASSERT_EQ(out.size(), 2U);
  EXPECT_GE(out[0]["data_wait_s"].get<double>(), 0.503);
  EXPECT_LE(out[0]["data_wait_s"].get<double>(), 0.5 + fetch.count());
  EXPECT_EQ(out[1]["data_wait_s"].get<double>(), 0.0);
}

TEST(StepClock, DataWaitIsUnknownUntilAFetchIsTimed) {
  StepClock clock;
  clock.step();  // a loop that does not wrap its loader: its wait is unknown, not 0
  clock.fetch_begin();
  clock.step();       // a fetch begun and not yet ended has timed nothing
  clock.fetch_end();  // it ends in the next step, which it counts in
  clock.step();
  clock.step();  // from the first timed fetch on, a step without one did not wait
  const auto out = take(clock);
  ASSERT_EQ(out.size(), 4U);
  EXPECT_TRUE(out[0]["data_wait_s"].is_null());
  EXPECT_TRUE(out[1]["data_wait_s"].is_null());
  EXPECT_TRUE(out[2]["data_wait_s"].is_number());
  EXPECT_EQ(out[3]["data_wait_s"].get<double>(), 0.0);
}

TEST(StepClock, AnEpochWithoutABatchRestartsTheStep) {
  StepClock clock;
  std::this_thread::sleep_for(20ms);  // e.g. building the loader: not a step
  const auto before = std::chrono::steady_clock::now();
  clock.begin_epoch();
  clock.step();
  const std::chrono::duration<double> first = std::chrono::steady_clock::now() - before;
  clock.fetch_begin();
  clock.fetch_end();
  std::this_thread::sleep_for(20ms);
  clock.begin_epoch();  // a batch was fetched: the step goes on
  clock.step();
  const auto out = take(clock);
  ASSERT_EQ(out.size(), 2U);
  EXPECT_LE(out[0]["cpu_step_s"].get<double>(), first.count());  // not the 20 ms before
  EXPECT_GE(out[1]["cpu_step_s"].get<double>(), 0.019);
}

TEST(StepClock, AllocatorStatsAtABoundedRateAndOnDemand) {
  int calls = 0;
  StepClockOptions o;
  o.allocator_interval_s = 3600;
  o.allocator_source = [&] {
    AllocatorStats s;
    s.allocated_bytes = 100 + ++calls;
    return s;
  };
  StepClock clock(o);
  clock.step();
  clock.step();
  EXPECT_FALSE(clock.allocator_stats_due());
  AllocatorStats given;
  given.reserved_bytes = 7;
  clock.set_next_allocator_stats(given);
  clock.step();
  const auto out = take(clock);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(out[0]["mem"]["allocated"], 101);
  EXPECT_TRUE(out[0]["mem"]["reserved"].is_null());
  EXPECT_TRUE(out[1]["mem"].is_null());
  EXPECT_TRUE(out[2]["mem"]["allocated"].is_null());
  EXPECT_EQ(out[2]["mem"]["reserved"], 7);
}

TEST(StepClock, AThrowingAllocatorSourcePassesThroughAndTheClockGoesOn) {
  StepClockOptions o;
  o.allocator_interval_s = 3600;
  o.allocator_source = []() -> AllocatorStats { throw std::runtime_error("stats broke"); };
  StepClock clock(o);
  EXPECT_THROW(clock.step(), std::runtime_error);
  clock.step();  // not due again: the step goes out
  EXPECT_EQ(take(clock).size(), 1U);
}

TEST(StepClock, GpuTimeIsReadAStepLaterWithoutWaiting) {
  auto timer = std::make_shared<FakeTimer>();
  StepClockOptions o;
  o.gpu_timer = timer;
  o.gpu_interval_s = 0;  // every step
  StepClock clock(o);    // records event 0: step 0's start
  timer->gpu_clock = 2;
  clock.step();  // step 0 ends (event 1); it waits for its GPU time
  EXPECT_FALSE(clock.has_out());
  timer->done_upto = 1;
  timer->gpu_clock = 3;
  clock.step();  // step 1 ends (event 2): step 0 goes out with 2 s
  auto out = take(clock);
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0]["step"], 0);
  EXPECT_DOUBLE_EQ(out[0]["gpu_step_s"].get<double>(), 2.0);
  const auto recent = clock.recent();  // step 1, still waiting, is shown with null
  ASSERT_EQ(recent.size(), 1U);
  EXPECT_EQ(json::parse(recent[0])["step"], 1);
  EXPECT_TRUE(json::parse(recent[0])["gpu_step_s"].is_null());
  clock.finish();  // event 2 not done: null, not a wait
  out = take(clock);
  ASSERT_EQ(out.size(), 1U);
  EXPECT_TRUE(out[0]["gpu_step_s"].is_null());
  EXPECT_EQ(timer->recorded(), 3U);  // one event a step: a step's end starts the next
}

TEST(StepClock, GpuTimeAtABoundedRate) {
  auto timer = std::make_shared<FakeTimer>();
  StepClockOptions o;
  o.gpu_timer = timer;
  o.gpu_interval_s = 3600;
  StepClock clock(o);
  timer->done_upto = 1000;
  for (int i = 0; i < 50; ++i) clock.step();
  clock.finish();
  const auto out = take(clock);
  ASSERT_EQ(out.size(), 50U);
  EXPECT_FALSE(out[0]["gpu_step_s"].is_null());  // the first step is timed ...
  for (std::size_t i = 1; i < out.size(); ++i) EXPECT_TRUE(out[i]["gpu_step_s"].is_null());
  EXPECT_EQ(timer->recorded(), 2U);  // ... with two events in all, not two a step
}

TEST(StepClock, AGivenGpuTimeIsSentWithTheNextStepOnly) {
  StepClock clock;
  clock.set_next_gpu_seconds(0.25);
  clock.step();
  clock.set_next_gpu_seconds(-1);  // ignored
  clock.step();
  const auto out = take(clock);
  EXPECT_EQ(out[0]["gpu_step_s"], 0.25);
  EXPECT_TRUE(out[1]["gpu_step_s"].is_null());
}

TEST(StepClock, RecentKeepsTheLastLinesOldestFirst) {
  StepClockOptions o;
  o.keep_recent = 3;
  StepClock clock(o);
  const auto recent = [&] {
    std::vector<int> steps;
    for (const auto& line : clock.recent()) steps.push_back(json::parse(line)["step"].get<int>());
    return steps;
  };
  clock.step();
  clock.step();
  EXPECT_EQ(recent(), (std::vector<int>{0, 1}));  // in the outbox
  take(clock);
  EXPECT_EQ(recent(), (std::vector<int>{0, 1}));  // in the ring
  clock.step();
  EXPECT_EQ(recent(), (std::vector<int>{0, 1, 2}));  // both
  for (int i = 0; i < 4; ++i) clock.step();
  EXPECT_EQ(recent(), (std::vector<int>{4, 5, 6}));  // the outbox alone
  take(clock);
  clock.step();
  EXPECT_EQ(recent(), (std::vector<int>{5, 6, 7}));
  for (int i = 0; i < 7; ++i) {
    take(clock);  // the ring wraps
    clock.step();
  }
  EXPECT_EQ(recent(), (std::vector<int>{12, 13, 14}));
  EXPECT_TRUE(StepClock().recent().empty());  // keep_recent 0: none kept
}

}  // namespace
}  // namespace gpumon::client
