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

/// Four GPUs; GPU `gpu`'s temperature call sleeps `hang_s` seconds while scenario time is below
/// 10 s (time stands at 0 until the test moves it).
std::string hang_scenario(int hang_s, unsigned gpu = 3) {
  std::string devices;
  for (unsigned i = 0; i < 4; ++i) {
    if (i > 0) devices += ", ";
    devices += i != gpu ? "{}"
                        : R"({"latency_us": {"nvmlDeviceGetTemperature": {"us": )" +
                              std::to_string(hang_s * 1000000) +
                              R"(, "mode": "sleep", "until_s": 10}}})";
  }
  return R"({"device_template": {}, "repeat_devices": 4, "devices": [)" + devices + "]}";
}

/// GPU `gpu` in `t`, or nullptr when the tick left it out (not read).
const DeviceSample* find_gpu(const TickSample& t, unsigned gpu) {
  for (const DeviceSample& s : t.gpus) {
    if (s.index == gpu) return &s;
  }
  return nullptr;
}

/// Ticks in which GPU `gpu` was published stale; with `call`, only those stale inside it.
std::size_t stale_ticks(const RealRun& run, unsigned gpu = 3, const char* call = nullptr) {
  std::size_t n = 0;
  for (const TickSample& t : run.sink->ticks()) {
    const DeviceSample* s = find_gpu(t, gpu);
    n += s != nullptr && s->stale && (call == nullptr || s->stale->call == call);
  }
  return n;
}

TEST(SamplerHang, HungGpuIsStaleAndTheOthersKeepTheirSchedule) {
  TempScenario sc(hang_scenario(3));
  FakeScenario env(sc.path(), 0, kTimeStandsStill);
  const milliseconds interval(100);
  RealRun run(interval);
  ASSERT_TRUE(run.sampler);
  ASSERT_TRUE(run.until([&] { return stale_ticks(run, 3, "nvmlDeviceGetTemperature") >= 10; }));
  const SamplerStats stats = run.sampler->stats();
  // End the hang and let the call return, so no reader is left inside the fake library.
  Hooks::get().set_time(20);
  ASSERT_TRUE(run.until([&] { return run.sampler->stats().stale_gpus.empty(); }));
  run.stop();
  const auto ticks = run.sink->ticks();
  ASSERT_GE(ticks.size(), 10U);
  for (std::size_t k = 0; k < ticks.size(); ++k) {
    const TickSample& t = ticks[k];
    for (unsigned gpu = 0; gpu < 3; ++gpu) {  // before GPU 3 in its reader's order: every tick
      const DeviceSample* s = find_gpu(t, gpu);
      ASSERT_NE(s, nullptr) << "tick " << k << " GPU " << gpu;
      EXPECT_FALSE(s->stale) << "tick " << k << " GPU " << gpu;
      EXPECT_TRUE(s->power_draw_w.has_value()) << "tick " << k << " GPU " << gpu;
    }
    // No tick waits for the hung call: one that did would leave a gap of seconds (the call
    // sleeps 3 s). The bound is far above a slot or two, so a loaded machine's late wake-ups
    // do not fail it (the first tick, which reads every GPU's static details, may overrun).
    if (k > 1) {
      EXPECT_LT(t.mono_time - ticks[k - 1].mono_time, 10 * interval) << "tick " << k;
    }
    const DeviceSample* hung = find_gpu(t, 3);
    if (hung == nullptr || !hung->stale) continue;
    const DeviceSample& s = *hung;
    EXPECT_FALSE(s.lost);  // stale is not lost
    EXPECT_FALSE(s.power_draw_w.has_value());
    EXPECT_EQ(s.power_draw_w.why(), Missing::kStale);
    // Inside the hung call, or at the hang's edges (before the call starts, after it returns, on
    // a loaded machine) between calls of the task that makes it: then the task is named.
    if (s.stale->call != "nvmlDeviceGetTemperature") {
      EXPECT_EQ(s.stale->call, "slow_metrics");
    }
  }
  ASSERT_EQ(stats.stale_gpus.size(), 1U);
  EXPECT_EQ(stats.stale_gpus[0].gpu, 3U);
  EXPECT_EQ(stats.stale_gpus[0].call, "nvmlDeviceGetTemperature");
  EXPECT_GT(stats.stale_gpus[0].for_s, 0);
  EXPECT_TRUE(stats.lost_gpus.empty());
}

// The reader that hangs in GPU 1 had not reached GPUs 2 and 3 in that tick: they miss that one
// tick only, then the next reader reads them every tick.
TEST(SamplerHang, GpusAfterTheHungOneMissOneTickOnly) {
  TempScenario sc(hang_scenario(3, 1));
  FakeScenario env(sc.path(), 0, kTimeStandsStill);
  RealRun run(milliseconds(100));
  ASSERT_TRUE(run.sampler);
  ASSERT_TRUE(run.until([&] { return stale_ticks(run, 1) >= 10; }));
  Hooks::get().set_time(20);
  ASSERT_TRUE(run.until([&] { return run.sampler->stats().stale_gpus.empty(); }));
  run.stop();
  const auto ticks = run.sink->ticks();
  bool was_stale = false;
  for (std::size_t k = 0; k < ticks.size(); ++k) {
    const DeviceSample* hung = find_gpu(ticks[k], 1);
    const bool stale = hung != nullptr && hung->stale;
    for (unsigned gpu = 2; gpu < 4; ++gpu) {
      const DeviceSample* s = find_gpu(ticks[k], gpu);
      if (s == nullptr) {
        EXPECT_TRUE(stale && !was_stale) << "tick " << k << " GPU " << gpu;
      } else {
        EXPECT_FALSE(s->stale) << "tick " << k << " GPU " << gpu;
      }
    }
    if (hung != nullptr) was_stale = stale;
  }
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
      const DeviceSample* s = find_gpu(ticks[k], 3);
      if (s != nullptr && !s->stale && s->temperature_gpu_c.has_value()) return true;
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
    const DeviceSample* hung = find_gpu(ticks.back(), 3);
    const DeviceSample* healthy = find_gpu(ticks.back(), 0);
    if (!hung || !hung->stale || !healthy || !healthy->energy_mj) std::exit(4);
    run.sampler.reset();
    std::exit(0);  // with the reader asleep inside the fake library
  };
  EXPECT_EXIT(stop_and_exit(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace gpumon
