// SPDX-License-Identifier: MIT
// One GPU's NVML call hangs (the fake library sleeps in it): the other GPUs keep their schedule,
// the hung GPU is published stale with the call that has not returned, rejoins when the call
// returns, and stop() does not wait for it. Real time on the fake NVML; the tests wait for
// conditions, never for guessed spans.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "fake_nvml/fake_test_env.h"
#include "sampler/testing/real_run.h"

namespace gpumon {
namespace {

using fake::testing::FakeScenario;
using fake::testing::Hooks;
using fake::testing::kTimeStandsStill;
using fake::testing::TempScenario;
using std::chrono::milliseconds;
using testing::RealRun;

/// Four GPUs; GPU 3's temperature call sleeps `hang_s` seconds while scenario time is below 10 s
/// (time stands at 0 until the test moves it).
std::string hang_scenario(int hang_s) {
  return R"({"device_template": {}, "repeat_devices": 4, "devices": [{}, {}, {}, {"latency_us": {"nvmlDeviceGetTemperature":
            {"us": )" +
         std::to_string(hang_s * 1000000) + R"(, "mode": "sleep", "until_s": 10}}}]})";
}

/// Ticks in which GPU 3 was published stale.
std::size_t stale_ticks(const RealRun& run) {
  std::size_t n = 0;
  for (const TickSample& t : run.sink->ticks()) n += t.gpus.size() == 4 && t.gpus[3].stale;
  return n;
}

TEST(SamplerHang, HungGpuIsStaleAndTheOthersKeepTheirSchedule) {
  TempScenario sc(hang_scenario(3));
  FakeScenario env(sc.path(), 0, kTimeStandsStill);
  const milliseconds interval(100);
  RealRun run(interval);
  ASSERT_TRUE(run.sampler);
  ASSERT_TRUE(run.until([&] { return stale_ticks(run) >= 10; }));
  const SamplerStats stats = run.sampler->stats();
  // End the hang and let the call return, so no reader is left inside the fake library.
  Hooks::get().set_time(20);
  ASSERT_TRUE(run.until([&] { return run.sampler->stats().stale_gpus.empty(); }));
  run.stop();
  const auto ticks = run.sink->ticks();
  ASSERT_GE(ticks.size(), 10U);
  for (std::size_t k = 0; k < ticks.size(); ++k) {
    const TickSample& t = ticks[k];
    ASSERT_EQ(t.gpus.size(), 4U);
    for (unsigned gpu = 0; gpu < 3; ++gpu) {
      EXPECT_FALSE(t.gpus[gpu].stale) << "tick " << k << " GPU " << gpu;
      EXPECT_TRUE(t.gpus[gpu].power_draw_w.has_value()) << "tick " << k << " GPU " << gpu;
    }
    // Ticks stay on their slots: at most one slot skipped between two published ticks (the
    // first tick, which reads every GPU's static details, may overrun).
    if (k > 1) EXPECT_LE(t.mono_time - ticks[k - 1].mono_time, 2 * interval) << "tick " << k;
    if (!t.gpus[3].stale) continue;
    const DeviceSample& s = t.gpus[3];
    EXPECT_FALSE(s.lost);  // stale is not lost
    EXPECT_FALSE(s.power_draw_w.has_value());
    EXPECT_EQ(s.power_draw_w.why(), Missing::kStale);
    EXPECT_EQ(s.stale->call, "nvmlDeviceGetTemperature");
  }
  ASSERT_EQ(stats.stale_gpus.size(), 1U);
  EXPECT_EQ(stats.stale_gpus[0].gpu, 3U);
  EXPECT_EQ(stats.stale_gpus[0].call, "nvmlDeviceGetTemperature");
  EXPECT_GT(stats.stale_gpus[0].for_s, 0);
  EXPECT_TRUE(stats.lost_gpus.empty());
}

TEST(SamplerHang, HungGpuRejoinsWhenItsCallReturns) {
  TempScenario sc(hang_scenario(2));
  FakeScenario env(sc.path(), 0, kTimeStandsStill);
  RealRun run(milliseconds(100));
  ASSERT_TRUE(run.sampler);
  ASSERT_TRUE(run.until([&] { return stale_ticks(run) >= 1; }));
  Hooks::get().set_time(20);  // past the hang's window: the next temperature call returns at once
  const std::size_t before = run.sink->ticks().size();
  ASSERT_TRUE(run.until([&] {
    const auto ticks = run.sink->ticks();
    for (std::size_t k = before; k < ticks.size(); ++k) {
      const DeviceSample& s = ticks[k].gpus.at(3);
      if (!s.stale && s.temperature_gpu_c.has_value()) return true;
    }
    return false;
  }));
  EXPECT_TRUE(run.sampler->stats().stale_gpus.empty());
  run.stop();
}

// In a child process (a death test, re-run from the start): the reader left inside the 60 s
// call keeps its backend, and with it the fake library's state, until the process ends, and
// the process must then exit cleanly (no crash, no sanitizer report) while it sleeps there.
TEST(SamplerHangDeathTest, StopDoesNotWaitForAHungCallAndTheProcessExitsCleanly) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const auto stop_and_exit = [] {
    TempScenario sc(hang_scenario(60));
    FakeScenario env(sc.path(), 0, kTimeStandsStill);
    RealRun run(milliseconds(100));
    if (!run.sampler || !run.until([&] { return stale_ticks(run) >= 1; })) std::exit(2);
    const auto before = std::chrono::steady_clock::now();
    run.stop();
    // stop() waits config().stop_timeout (2 s) at most for calls in progress; the limit here is
    // far from it and from the 60 s hang alike.
    if (std::chrono::steady_clock::now() - before > std::chrono::seconds(10)) std::exit(3);
    // The final tick read the other GPUs' edges (energy) and published GPU 3 stale.
    const auto ticks = run.sink->ticks();
    if (!ticks.back().gpus.at(3).stale || !ticks.back().gpus.at(0).energy_mj) std::exit(4);
    run.sampler.reset();
    std::exit(0);  // with the reader asleep inside the fake library
  };
  EXPECT_EXIT(stop_and_exit(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace gpumon
