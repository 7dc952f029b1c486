// SPDX-License-Identifier: MIT
// The sampler on the real loader and backend over gpumon's fake NVML library, in real time.
#include <gtest/gtest.h>

#include "fake_nvml/fake_test_env.h"
#include "sampler/testing/real_run.h"

namespace gpumon {
namespace {

using fake::testing::FakeScenario;
using std::chrono::milliseconds;
using testing::RealRun;

TEST(SamplerFakeNvml, DemoAt100HzForHalfASecond) {
  FakeScenario env("demo");
  RealRun run(milliseconds(10), milliseconds(500));
  ASSERT_TRUE(run.sampler);
  const auto ticks = run.sink->ticks();
  // About 50; a loaded or sanitized machine may overrun some ticks, never add any.
  EXPECT_GE(ticks.size(), 25U);
  EXPECT_LE(ticks.size(), 52U);
  std::size_t with_util = 0;
  for (const TickSample& t : ticks) {
    ASSERT_EQ(t.gpus.size(), 8U);
    with_util += t.gpus[7].utilization_gpu_pct.has_value();
    EXPECT_TRUE(t.gpus[0].memory_used_bytes.has_value());
  }
  // Utilization is paced to 10 Hz (its own window is 1/6 s or more): about every 10th tick.
  EXPECT_GE(with_util, ticks.size() / 10);
  EXPECT_LE(with_util, ticks.size() / 10 + 2);
  EXPECT_TRUE(ticks.front().gpus[0].energy_mj.has_value());  // the first tick reads energy
  const SamplerStats s = run.sampler->stats();
  EXPECT_EQ(s.ticks, ticks.size());
  EXPECT_EQ(s.nvml_errors, 0U);
  EXPECT_TRUE(s.lost_gpus.empty());
  EXPECT_EQ(run.sink->processes().size(), 8U);  // one process read (2 s period) per GPU
  const auto devices = run.sampler->devices();
  ASSERT_EQ(devices.size(), 8U);
  EXPECT_TRUE(devices[0].max_sm_clock_mhz.has_value());  // static details were read
}

TEST(SamplerFakeNvml, LostGpuEmitsAnEventAndTheOtherContinues) {
  FakeScenario env("gpu-lost", /*offset_s=*/4.7);  // GPU 1 is lost at 5 s
  RealRun run(milliseconds(50), milliseconds(800));
  ASSERT_TRUE(run.sampler);
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
  ASSERT_GE(ticks.size(), 8U);
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
  RealRun run(milliseconds(100), milliseconds(500));
  ASSERT_TRUE(run.sampler);
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
