// SPDX-License-Identifier: MIT
// The sampler's contract on a fake clock and backend: lost GPUs, failing sinks and backends,
// configuration errors, processes; and how fast stop() returns on the real clock.
#include "sampler/sampler.h"

#include <gtest/gtest.h>

#include <thread>

#include "gpu/metric_catalog.h"
#include "sampler/sample_errors.h"
#include "sampler/testing/fake_run.h"

namespace gpumon {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::FakeBackend;
using testing::FakeClock;
using testing::FakeRun;
using testing::RecordingSink;

SamplerConfig every_100ms() {
  SamplerConfig c;
  c.interval = milliseconds(100);
  c.energy_period = std::chrono::seconds(1);  // the schedule tests count reads per second
  return c;
}

TEST(Sampler, LostAndRecoveredEventsWhileOthersContinue) {
  FakeRun run(3, every_100ms());
  run.backend->set_lost(1, run.t0 + seconds(1), run.t0 + seconds(3));
  run.run_for(seconds(5));
  const auto events = run.sink->events();
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[0].gpu, 1U);
  EXPECT_EQ(events[0].kind, GpuEvent::Kind::kLost);
  EXPECT_EQ(events[0].mono_time, run.t0 + seconds(1));
  EXPECT_EQ(events[1].kind, GpuEvent::Kind::kRecovered);
  EXPECT_EQ(events[1].mono_time, run.t0 + seconds(3));
  EXPECT_EQ(run.sampler->events().latest(10).size(), 2U);

  const auto ticks = run.sink->ticks();
  ASSERT_EQ(ticks.size(), 51U);  // and the final tick
  for (std::size_t k = 0; k < ticks.size(); ++k) {
    ASSERT_EQ(ticks[k].gpus.size(), 3U);
    EXPECT_EQ(ticks[k].gpus[1].lost, k >= 10 && k < 30) << k;
    EXPECT_FALSE(ticks[k].gpus[0].lost);
    EXPECT_EQ(ticks[k].gpus[2].utilization_gpu_pct.value_or(0), 52U);
  }
  // While lost, only the metrics read touches GPU 1: no energy or process reads.
  for (auto t : run.calls(1, MetricGroup::kEnergy)) {
    EXPECT_TRUE(t < run.t0 + seconds(1) || t >= run.t0 + seconds(3));
  }
  EXPECT_TRUE(run.sampler->stats().lost_gpus.empty());
}

TEST(Sampler, StillLostGpuIsListedInStats) {
  FakeRun run(2, every_100ms());
  run.backend->set_lost(0, run.t0 + milliseconds(500), run.t0 + seconds(100));
  run.run_for(seconds(1));
  EXPECT_EQ(run.sampler->stats().lost_gpus, std::vector<unsigned>{0});
  ASSERT_EQ(run.sink->events().size(), 1U);
  EXPECT_EQ(run.sink->events()[0].kind, GpuEvent::Kind::kLost);
}

TEST(Sampler, ThrowingSinkIsCountedAndOthersStillServed) {
  FakeRun run(1, every_100ms());
  auto bad = std::make_shared<RecordingSink>(/*throw_on_tick=*/true);
  auto good = std::make_shared<RecordingSink>();
  // FakeRun added its own sink first; add a failing one and a good one after it.
  run.sampler->add_sink(bad);
  run.sampler->add_sink(good);
  run.run_for(seconds(1));
  EXPECT_EQ(bad->ticks().size(), 11U);  // and the final tick
  EXPECT_EQ(good->ticks().size(), 11U);
  const SamplerStats s = run.sampler->stats();
  EXPECT_EQ(s.ticks, 11U);
  EXPECT_EQ(s.sink_errors, 11U);
  EXPECT_EQ(run.sampler->history().size(), 11U);
}

TEST(Sampler, ThrowingBackendCallIsCaughtAndCounted) {
  FakeRun run(2, every_100ms());
  run.backend->set_throw(MetricGroup::kEnergy);
  run.run_for(seconds(2));
  const SamplerStats s = run.sampler->stats();
  EXPECT_EQ(s.ticks, 21U);
  // Energy: GPU 0 at 0, 1 and 2 s (the final tick); GPU 1 at the start, 0.5, 1.5 and 2 s. A
  // read at the start that failed is not retried every tick.
  EXPECT_EQ(s.exceptions, 7U);
  EXPECT_EQ(s.tasks[1].exceptions, 7U);
  EXPECT_EQ(run.calls(1, MetricGroup::kUtilization).size(), 21U);
}

TEST(Sampler, NvmlErrorsAreCounted) {
  SamplerConfig c = every_100ms();
  c.energy = false;
  FakeRun run(2, c);
  run.backend->set_error(MetricGroup::kPower);  // read every tick
  run.run_for(seconds(1));
  EXPECT_EQ(run.sampler->stats().nvml_errors, 20U);
  EXPECT_EQ(run.sink->ticks()[3].gpus[0].power_draw_w.why(), Missing::kError);
}

TEST(Sampler, EveryMetricsErrorIsCountedOnce) {
  for (const MetricInfo& m : metric_catalog()) {
    DeviceSample s;
    set_all_missing(s, Missing::kNotSupported);
    set_metric_missing(s, m.id, Missing::kError);
    EXPECT_EQ(count_errors(s), m.id == MetricId::kLost ? 0U : 1U) << m.name;
  }
  DeviceSample lost;
  mark_lost(lost);
  EXPECT_EQ(count_errors(lost), 0U);  // lost, not an error
}

TEST(Sampler, ProcessSnapshotsCarryTheirGpu) {
  FakeRun run(3, every_100ms());
  run.run_for(seconds(1));
  const auto snaps = run.sink->processes();
  ASSERT_EQ(snaps.size(), 3U);
  for (unsigned gpu = 0; gpu < 3; ++gpu) {
    EXPECT_EQ(snaps[gpu].gpu, gpu);
    ASSERT_EQ(snaps[gpu].processes.size(), 1U);
    EXPECT_EQ(snaps[gpu].processes[0].gpu_index, gpu);
    EXPECT_EQ(snaps[gpu].processes[0].pid, 4000000 + gpu);
  }
  EXPECT_EQ(run.sampler->latest_processes().size(), 3U);
}

TEST(Sampler, HostDetailsOfProcessesThatAreNotThere) {
  auto clock = std::make_shared<FakeClock>();
  clock->set_end(clock->now() + seconds(1));
  SamplerConfig c = every_100ms();
  Sampler sampler(std::make_unique<FakeBackend>(1, clock), c, clock);
  sampler.start();
  clock->wait_until_parked();
  sampler.stop();
  const auto procs = sampler.latest_processes();
  ASSERT_EQ(procs.size(), 1U);
  ASSERT_EQ(procs[0].processes.size(), 1U);
  EXPECT_FALSE(procs[0].processes[0].command_line.has_value());  // no such PID here
  EXPECT_EQ(sampler.stats().tasks.back().name, "host_details");
  EXPECT_EQ(sampler.stats().tasks.back().runs, 1U);
}

TEST(Sampler, ConfigurationErrorsNameTheSetting) {
  auto clock = std::make_shared<FakeClock>();
  auto make = [&](SamplerConfig c) {
    return Sampler(std::make_unique<FakeBackend>(1, clock), c, clock);
  };
  for (auto ms : {0, 9, 60001}) {
    SamplerConfig c;
    c.interval = milliseconds(ms);
    try {
      make(c);
      ADD_FAILURE() << ms;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("interval"), std::string::npos) << e.what();
    }
  }
  SamplerConfig c;
  c.history_capacity = 0;
  EXPECT_THROW(make(c), std::invalid_argument);
  EXPECT_THROW(Sampler(nullptr, SamplerConfig{}, clock), std::invalid_argument);
  c.history_capacity = 8;
  c.interval = milliseconds(10);
  EXPECT_NO_THROW(make(c));
}

TEST(Sampler, ConfigureBeforeStartOnly) {
  auto clock = std::make_shared<FakeClock>();
  Sampler sampler(std::make_unique<FakeBackend>(1, clock), every_100ms(), clock);
  sampler.start();
  EXPECT_THROW(sampler.add_sink(std::make_shared<RecordingSink>()), std::logic_error);
  EXPECT_THROW(sampler.add_task({"late", {}, false, {}, [](auto&, unsigned, auto&) {}}),
               std::logic_error);
  EXPECT_THROW(sampler.start(), std::logic_error);
  EXPECT_TRUE(sampler.running());
  sampler.stop();
  sampler.stop();  // idempotent
  EXPECT_FALSE(sampler.running());
  Sampler never_started(std::make_unique<FakeBackend>(1, clock), every_100ms(), clock);
  never_started.stop();
  EXPECT_THROW(never_started.start(), std::logic_error);
}

TEST(Sampler, StopReturnsPromptlyOnTheRealClock) {
  SamplerConfig c;
  c.interval = seconds(60);
  auto clock = std::make_shared<FakeClock>();
  Sampler sampler(std::make_unique<FakeBackend>(2, clock), c);  // SteadyClock
  sampler.start();
  while (sampler.stats().ticks == 0) std::this_thread::sleep_for(milliseconds(1));
  const auto before = std::chrono::steady_clock::now();
  sampler.stop();
  const auto took = std::chrono::steady_clock::now() - before;
  // A 60 s sleep, cut short by the condition variable: a stop that waited for the interval
  // would take about a minute, one that wakes the thread takes milliseconds however loaded.
  EXPECT_LT(took, seconds(30));
  EXPECT_EQ(sampler.stats().ticks, 2U);  // the first and the final one
  EXPECT_GT(sampler.stats().thread_cpu_s, 0.0);
}

TEST(Sampler, DestructorStopsARunningSampler) {
  SamplerConfig c;
  c.interval = milliseconds(10);
  auto clock = std::make_shared<FakeClock>();
  auto sink = std::make_shared<RecordingSink>();
  {
    Sampler sampler(std::make_unique<FakeBackend>(1, clock), c);
    sampler.add_sink(sink);
    sampler.start();
    while (sampler.stats().ticks < 3) std::this_thread::sleep_for(milliseconds(1));
  }
  const std::size_t after = sink->ticks().size();
  std::this_thread::sleep_for(milliseconds(30));
  EXPECT_EQ(sink->ticks().size(), after);  // no tick after destruction
}

}  // namespace
}  // namespace gpumon
