// SPDX-License-Identifier: MIT
// The sampler on the real loader and backend over gpumon's fake NVML library, in real time.
// Each test waits for the ticks it needs; where scenario time matters it stands still until the
// test moves it, so a slow (loaded, sanitized) machine sees the same run, only later.
#include <gtest/gtest.h>

#include "fake_nvml/fake_test_env.h"
#include "sampler/testing/real_run.h"

namespace gpumon {
namespace {

using fake::testing::FakeScenario;
using fake::testing::Hooks;
using fake::testing::kTimeStandsStill;
using std::chrono::milliseconds;
using testing::RealRun;

TEST(SamplerFakeNvml, DemoAt100Hz) {
  FakeScenario env("demo");
  RealRun run(milliseconds(10));
  ASSERT_TRUE(run.sampler);
  ASSERT_TRUE(run.until([&] { return run.ticks() >= 50; }));
  run.stop();
  const auto ticks = run.sink->ticks();
  ASSERT_GE(ticks.size(), 50U);
  std::size_t with_util = 0;
  for (const TickSample& t : ticks) {
    ASSERT_EQ(t.gpus.size(), 8U);
    with_util += t.gpus[7].utilization_gpu_pct.has_value();
    EXPECT_TRUE(t.gpus[0].memory_used_bytes.has_value());
  }
  // Utilization is paced to 10 Hz (its own window is 1/6 s or more): the first tick reads it,
  // then at most once per 100 ms step of a grid that starts as the sampler does (a little
  // before the first tick), however late the ticks ran.
  const auto span = ticks.back().mono_time - ticks.front().mono_time;
  EXPECT_TRUE(ticks.front().gpus[7].utilization_gpu_pct.has_value());
  EXPECT_LE(with_util, static_cast<std::size_t>(span / milliseconds(100)) + 2);
  for (unsigned gpu = 0; gpu < 8; ++gpu) {  // the first and the final tick read every GPU's energy
    EXPECT_TRUE(ticks.front().gpus[gpu].energy_mj.has_value()) << gpu;
    EXPECT_TRUE(ticks.back().gpus[gpu].energy_mj.has_value()) << gpu;
  }
  const SamplerStats s = run.sampler->stats();
  EXPECT_EQ(s.ticks, ticks.size());
  EXPECT_EQ(s.nvml_errors, 0U);
  EXPECT_TRUE(s.lost_gpus.empty());
  // One process read per GPU each 2 s of the run (the first tick's, and later ones when the
  // ticks took that long).
  const auto snapshots = run.sink->processes().size();
  EXPECT_EQ(snapshots % 8, 0U);
  EXPECT_GE(snapshots, 8U);
  EXPECT_LE(snapshots, 8 * (static_cast<std::size_t>(span / milliseconds(2000)) + 1));
  const auto devices = run.sampler->devices();
  ASSERT_EQ(devices.size(), 8U);
  EXPECT_TRUE(devices[0].max_sm_clock_mhz.has_value());  // static details were read
}

TEST(SamplerFakeNvml, LostGpuEmitsAnEventAndTheOtherContinues) {
  FakeScenario env("gpu-lost", /*offset_s=*/4.9, kTimeStandsStill);  // GPU 1 is lost at 5 s
  RealRun run(milliseconds(50));
  ASSERT_TRUE(run.sampler);
  ASSERT_TRUE(run.until([&] { return run.ticks() >= 2; }));
  Hooks::get().set_time(5.1);
  ASSERT_TRUE(run.until([&] {
    const auto ticks = run.sink->ticks();
    return run.sink->events().size() >= 2 && ticks.back().gpus[1].lost;
  }));
  run.stop();
  // The XID 79 the driver reports first comes through the event stream; the loss itself is
  // reported once, by the ticks (the stream's own lost notice is dropped as a duplicate).
  const auto events = run.sink->events();
  ASSERT_EQ(events.size(), 2U);
  std::size_t lost = 0, xid79 = 0;
  for (const GpuEvent& e : events) {
    EXPECT_EQ(e.gpu, 1U);
    lost += e.kind == GpuEvent::Kind::kLost;
    xid79 += e.kind == GpuEvent::Kind::kXid && e.value == 79;
  }
  EXPECT_EQ(lost, 1U);
  EXPECT_EQ(xid79, 1U);
  const auto ticks = run.sink->ticks();
  EXPECT_FALSE(ticks.front().gpus[1].lost);
  EXPECT_TRUE(ticks.back().gpus[1].lost);
  for (const TickSample& t : ticks) {
    EXPECT_FALSE(t.gpus[0].lost);
    EXPECT_TRUE(t.gpus[0].power_draw_w.has_value());  // every tick (utilization: 10 Hz)
  }
  EXPECT_EQ(run.sampler->stats().lost_gpus, std::vector<unsigned>{1});
}

TEST(SamplerFakeNvml, SixtyFourGpus) {
  FakeScenario env("many-gpus-64");
  RealRun run(milliseconds(100));
  ASSERT_TRUE(run.sampler);
  ASSERT_TRUE(run.until([&] { return run.ticks() >= 3; }));
  run.stop();
  const auto ticks = run.sink->ticks();
  ASSERT_GE(ticks.size(), 3U);
  for (const TickSample& t : ticks) {
    ASSERT_EQ(t.gpus.size(), 64U);
    EXPECT_TRUE(t.gpus[63].power_draw_w.has_value());
  }
  EXPECT_TRUE(run.sampler->stats().lost_gpus.empty());
}

}  // namespace
}  // namespace gpumon
