// SPDX-License-Identifier: MIT
// The sampler's schedule on a fake clock: tick times, slow tasks at their rates, overruns.
// With energy read (the default), a run of N intervals has N ticks on the schedule and the
// final one at stop, at the end of the span.
#include <gtest/gtest.h>

#include <set>

#include "sampler/testing/fake_run.h"

namespace gpumon {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::FakeRun;

SamplerConfig every_100ms() {
  SamplerConfig c;
  c.interval = milliseconds(100);
  c.energy_period = std::chrono::seconds(1);  // the schedule tests count reads per second
  return c;
}

TEST(SamplerSchedule, EveryTickAtT0PlusKIntervals) {
  FakeRun run(2, every_100ms());
  run.backend->set_cost(MetricGroup::kUtilization, milliseconds(3));  // ticks take time
  run.run_for(seconds(10));
  const auto ticks = run.sink->ticks();
  ASSERT_EQ(ticks.size(), 101U);  // the last at 10 s: the final tick
  for (std::size_t k = 0; k < ticks.size(); ++k) {
    ASSERT_EQ(ticks[k].mono_time, run.t0 + k * milliseconds(100)) << k;
    ASSERT_EQ(ticks[k].gpus.size(), 2U);
    EXPECT_EQ(ticks[k].gpus[1].index, 1U);
  }
  const SamplerStats s = run.sampler->stats();
  EXPECT_EQ(s.ticks, 101U);
  EXPECT_EQ(s.overruns, 0U);
  EXPECT_EQ(s.last_tick, run.t0 + milliseconds(9900));  // the last on the schedule
  EXPECT_EQ(run.sampler->history().size(), 101U);
}

TEST(SamplerSchedule, NoDriftOver10000Ticks) {
  SamplerConfig c;
  c.interval = milliseconds(10);
  c.history_capacity = 16;
  FakeRun run(2, c);
  run.backend->set_cost(MetricGroup::kUtilization, std::chrono::microseconds(1700));
  run.run_for(seconds(100));
  const auto ticks = run.sink->ticks();
  ASSERT_EQ(ticks.size(), 10001U);
  for (std::size_t k = 0; k < ticks.size(); ++k) {
    ASSERT_EQ(ticks[k].mono_time, run.t0 + k * milliseconds(10)) << k;
  }
  EXPECT_EQ(run.sampler->stats().overruns, 0U);
  EXPECT_EQ(run.sampler->history().size(), 16U);  // bounded however long it ran
  EXPECT_EQ(run.sampler->history().total_pushed(), 10001U);
}

TEST(SamplerSchedule, SlowTasksAtTheirOwnRates) {
  FakeRun run(2, every_100ms());  // energy every 1 s, processes every 2 s by default
  run.run_for(seconds(10));
  for (unsigned gpu = 0; gpu < 2; ++gpu) {
    EXPECT_EQ(run.calls(gpu, MetricGroup::kUtilization).size(), 101U);
    // Every GPU at the start, then every second (spread: GPU 1 half a period later), and at
    // the stop.
    std::vector<MonoClock::time_point> want{run.t0};
    for (int k = 0; k < 10; ++k) {
      const auto at = run.t0 + k * seconds(1) + gpu * milliseconds(500);
      if (at != run.t0) want.push_back(at);
    }
    want.push_back(run.t0 + seconds(10));
    EXPECT_EQ(run.calls(gpu, MetricGroup::kEnergy), want);
    const auto procs = run.process_calls(gpu);
    ASSERT_EQ(procs.size(), 5U);
    for (std::size_t k = 0; k < procs.size(); ++k) EXPECT_EQ(procs[k], run.t0 + k * seconds(2));
    const auto details = run.calls(gpu, MetricGroup::kStaticDetails);
    ASSERT_EQ(details.size(), 1U);  // once, in the first tick
    EXPECT_EQ(details[0], run.t0);
  }
  // Energy appears in the ticks that read it, not in the others.
  const auto ticks = run.sink->ticks();
  EXPECT_TRUE(ticks[0].gpus[1].energy_mj.has_value());
  EXPECT_TRUE(ticks[10].gpus[0].energy_mj.has_value());
  EXPECT_FALSE(ticks[11].gpus[0].energy_mj.has_value());
  EXPECT_FALSE(ticks[10].gpus[1].energy_mj.has_value());
  EXPECT_TRUE(ticks[15].gpus[1].energy_mj.has_value());
  EXPECT_TRUE(ticks.back().gpus[1].energy_mj.has_value());
  EXPECT_EQ(run.sink->processes().size(), 10U);  // 5 reads x 2 GPUs
  const SamplerStats s = run.sampler->stats();
  // + slow_metrics, gpm, power and utilization samples (utilization's 100 ms pace is the
  // interval here, so it stays in the metrics read).
  ASSERT_EQ(s.tasks.size(), 8U);
  EXPECT_EQ(s.tasks[0].name, "metrics");
  EXPECT_EQ(s.tasks[0].runs, 202U);
  EXPECT_EQ(s.tasks[1].name, "energy");
  EXPECT_EQ(s.tasks[1].period, seconds(1));
  EXPECT_EQ(s.tasks[3].name, "processes");
  EXPECT_EQ(s.tasks[3].period, seconds(2));
}

TEST(SamplerSchedule, SlowPeriodsNeverFasterThanTheInterval) {
  SamplerConfig c;
  c.interval = milliseconds(500);
  c.energy_period = milliseconds(10);
  c.process_period = milliseconds(10);
  FakeRun run(1, c);
  run.run_for(seconds(10));
  EXPECT_EQ(run.calls(0, MetricGroup::kEnergy).size(), 21U);  // and the final read
  EXPECT_EQ(run.process_calls(0).size(), 20U);
}

TEST(SamplerSchedule, CostlySlowTaskIsStretchedToItsCpuShare) {
  SamplerConfig c = every_100ms();
  c.processes = false;
  FakeRun run(8, c);
  run.backend->set_cost(MetricGroup::kEnergy, milliseconds(10));
  run.run_for(seconds(16));
  // 10 ms x 8 GPUs at most 5 % of the period: every 1.6 s instead of every 1 s.
  const auto energy = run.calls(0, MetricGroup::kEnergy);
  ASSERT_EQ(energy.size(), 11U);  // and the final read
  EXPECT_EQ(energy[1], run.t0 + milliseconds(1600));
  const TaskStats t = run.sampler->stats().tasks[1];
  EXPECT_EQ(t.period, milliseconds(1600));
  EXPECT_DOUBLE_EQ(t.mean_cost_us, 10000);
  EXPECT_DOUBLE_EQ(t.max_cost_us, 10000);
  EXPECT_EQ(t.runs,
            95U);  // 10 per GPU, the start's 7 more (GPU 0's is one of its 10), 8 at the stop
}

TEST(SamplerSchedule, SlowTaskIsSpreadSoNoTickOverruns) {
  SamplerConfig c;
  c.interval = milliseconds(10);  // 8 energy reads of 2.4 ms in one tick would take 19 ms
  c.energy_period = seconds(1);
  c.processes = false;
  FakeRun run(8, c);
  run.backend->set_cost(MetricGroup::kEnergy, std::chrono::microseconds(2400));
  run.run_for(seconds(5));
  // Between the run's edges (every GPU read at the start and at the stop), spread.
  std::set<MonoClock::time_point> ticks_with_energy;
  std::size_t between = 0;
  for (unsigned gpu = 0; gpu < 8; ++gpu) {
    const auto energy = run.calls(gpu, MetricGroup::kEnergy);
    ASSERT_EQ(energy.size(), gpu == 0 ? 6U : 7U) << gpu;
    // In the first and the final tick, after the reads of the GPUs before it (2.4 ms each).
    const auto before = gpu * std::chrono::microseconds(2400);
    EXPECT_EQ(energy.front(), run.t0 + before);
    EXPECT_EQ(energy.back(), run.t0 + seconds(5) + before);
    const auto second =
        gpu == 0 ? run.t0 + seconds(1) : run.t0 + (100 * gpu / 8) * milliseconds(10);
    EXPECT_EQ(energy[1], second);  // g/8 of 100 ticks
    ticks_with_energy.insert(energy.begin() + 1, energy.end() - 1);
    between += energy.size() - 2;
  }
  EXPECT_EQ(ticks_with_energy.size(), between);  // never two GPUs' reads in one tick
  const SamplerStats s = run.sampler->stats();
  // Only the first tick, which reads every GPU (as it reads their static details).
  EXPECT_EQ(s.overruns, 1U);
  EXPECT_EQ(s.ticks, 500U);  // one slot skipped after the first tick, and the final tick
  EXPECT_DOUBLE_EQ(s.max_tick_duration_us, 8 * 2400);  // the first tick
}

TEST(SamplerSchedule, OverrunsAreCountedAndTheScheduleStaysAligned) {
  SamplerConfig c;
  c.interval = milliseconds(10);
  c.energy = c.processes = c.static_details = false;
  FakeRun run(1, c);
  run.backend->set_cost(MetricGroup::kPower, milliseconds(25));  // read every tick
  run.run_for(milliseconds(300));
  const auto ticks = run.sink->ticks();
  ASSERT_EQ(ticks.size(), 10U);
  for (std::size_t k = 0; k < ticks.size(); ++k) {
    EXPECT_EQ(ticks[k].mono_time, run.t0 + k * milliseconds(30));  // slots 0, 3, 6, ...
  }
  const SamplerStats s = run.sampler->stats();
  EXPECT_EQ(s.overruns, 10U);
  EXPECT_EQ(s.missed_ticks, 20U);
  EXPECT_DOUBLE_EQ(s.last_tick_duration_us, 25000);
  EXPECT_DOUBLE_EQ(s.max_tick_duration_us, 25000);
}

TEST(SamplerSchedule, ExtraTaskRunsAtItsPeriod) {
  FakeRun run(2, every_100ms());
  Task gpm{"gpm", milliseconds(500), false, std::chrono::microseconds(100),
           [](GpuBackend&, unsigned, GpuTickOutput& out) { out.sample.gpm_window_s = 0.5; }};
  run.sampler->add_task(gpm);
  run.run_for(seconds(2));
  const auto ticks = run.sink->ticks();
  ASSERT_EQ(ticks.size(), 21U);
  for (std::size_t k = 0; k < 20; ++k) {
    EXPECT_EQ(ticks[k].gpus[1].gpm_window_s.has_value(), k % 5 == 0) << k;
  }
  EXPECT_FALSE(ticks[20].gpus[1].gpm_window_s.has_value());  // the final tick reads no GPM
  EXPECT_EQ(run.sampler->stats().tasks.back().runs, 8U);
}

}  // namespace
}  // namespace gpumon

namespace gpumon {
namespace {

TEST(SamplerSchedule, SlowMetricGroupsOncePerPeriodMergedIntoTheTick) {
  FakeRun run(2, every_100ms());  // slow metrics (temperature, ECC, ...) every 1 s
  run.run_for(std::chrono::seconds(3));
  EXPECT_EQ(run.calls(0, MetricGroup::kUtilization).size(), 31U);
  const auto temps = run.calls(0, MetricGroup::kTemperature);
  ASSERT_EQ(temps.size(), 3U);  // none in the final tick
  EXPECT_EQ(temps[1], run.t0 + std::chrono::seconds(1));
  const auto ticks = run.sink->ticks();
  ASSERT_EQ(ticks.size(), 31U);
  // The due tick carries both parts; the others only the every-tick groups.
  EXPECT_TRUE(ticks[10].gpus[0].temperature_gpu_c.has_value());
  EXPECT_TRUE(ticks[10].gpus[0].utilization_gpu_pct.has_value());
  EXPECT_FALSE(ticks[11].gpus[0].temperature_gpu_c.has_value());
  EXPECT_TRUE(ticks[11].gpus[0].utilization_gpu_pct.has_value());
}

TEST(SamplerSchedule, UtilizationPacedTo10HzAt100Hz) {
  SamplerConfig c;
  c.interval = milliseconds(10);
  c.energy = c.processes = false;
  FakeRun run(1, c);
  run.run_for(std::chrono::seconds(1));
  EXPECT_EQ(run.calls(0, MetricGroup::kPower).size(), 100U);
  const auto util = run.calls(0, MetricGroup::kUtilization);
  ASSERT_EQ(util.size(), 10U);
  EXPECT_EQ(util[3], run.t0 + milliseconds(300));
}

TEST(SamplerSchedule, SlowMetricsEveryTickWhenTheIntervalIsLong) {
  SamplerConfig c;  // 1 s interval = the slow period: one read with every group, no split
  c.energy = false;
  FakeRun run(1, c);
  run.run_for(std::chrono::seconds(3));
  EXPECT_EQ(run.calls(0, MetricGroup::kTemperature).size(), 3U);
  for (const auto& call : run.backend->calls()) {
    if (call.processes || (call.what & static_cast<std::uint32_t>(MetricGroup::kTemperature)) == 0)
      continue;
    EXPECT_NE(call.what & static_cast<std::uint32_t>(MetricGroup::kUtilization), 0U);
  }
}

}  // namespace
}  // namespace gpumon
