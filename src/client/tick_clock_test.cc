// SPDX-License-Identifier: MIT
// TickClock: calibrated against steady_clock and then on its timeline; distrusted for good when
// its counter stands still or moves away; off with GPUMON_STEP_CLOCK=steady; the CPU's own TSC
// where it is invariant. And a StepClock over a counter that jumps keeps sane step times.
#include "client/tick_clock.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "client/step_clock.h"

namespace gpumon::client {
namespace {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

// A 3 GHz counter on steady_clock's time, `skew_ns` ahead; or stopped at `stopped` when set.
std::atomic<std::int64_t> skew_ns{0};
std::atomic<std::uint64_t> stopped{0};
std::uint64_t fake_ticks() {
  if (stopped != 0) return stopped;
  const std::int64_t ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(Steady::now().time_since_epoch())
          .count() +
      skew_ns;
  return static_cast<std::uint64_t>(ns) * 3;
}

struct FakeCounter : ::testing::Test {
  void SetUp() override {
    skew_ns = 0;
    stopped = 0;
  }
};

// |clock.now() - steady_clock::now()|, in µs: the closest of five tries (a loaded machine
// preempts some).
double apart_us(const TickClock& clock) {
  double best = 1e300;
  for (int i = 0; i < 5; ++i) {
    const auto before = Steady::now();
    const auto t = clock.now();
    const auto after = Steady::now();
    const auto mid = before + (after - before) / 2;
    best = std::min(best, std::abs(std::chrono::duration<double, std::micro>(t - mid).count()));
  }
  return best;
}

TEST_F(FakeCounter, ReadsSteadyClockUntilCalibratedThenTheCounterOnItsTimeline) {
  TickClock clock(&fake_ticks);
  EXPECT_TRUE(clock.trusted());
  clock.resync();  // too soon after the first pair for a rate
  EXPECT_FALSE(clock.counting());
  std::this_thread::sleep_for(TickClock::kCalibration + 5ms);
  clock.resync();
  ASSERT_TRUE(clock.counting());
  std::this_thread::sleep_for(10ms);
  EXPECT_LT(apart_us(clock), 20);
  clock.resync();  // agrees: stays on the counter
  EXPECT_TRUE(clock.counting());
  EXPECT_LT(apart_us(clock), 20);
}

TEST_F(FakeCounter, ACounterThatJumpsIsDistrustedForGood) {
  TickClock clock(&fake_ticks);
  std::this_thread::sleep_for(TickClock::kCalibration + 5ms);
  clock.resync();
  ASSERT_TRUE(clock.counting());
  skew_ns = 5'000'000;               // 5 ms ahead: a migrated VM, a TSC that is not synchronized
  EXPECT_GT(apart_us(clock), 4000);  // what the next resync is there to catch
  clock.resync();
  EXPECT_FALSE(clock.trusted());
  EXPECT_FALSE(clock.counting());
  EXPECT_LT(apart_us(clock), 1000);
  skew_ns = 0;
  std::this_thread::sleep_for(TickClock::kCalibration + 5ms);
  clock.resync();
  EXPECT_FALSE(clock.counting());  // for good
}

TEST_F(FakeCounter, ACounterThatStandsStillIsNeverUsed) {
  stopped = 12345;
  TickClock clock(&fake_ticks);
  std::this_thread::sleep_for(TickClock::kCalibration + 5ms);
  clock.resync();
  EXPECT_FALSE(clock.trusted());
  EXPECT_FALSE(clock.counting());
  EXPECT_LT(apart_us(clock), 1000);
}

TEST(TickClock, GpumonStepClockSteadyTurnsTheCounterOff) {
  ::setenv("GPUMON_STEP_CLOCK", "steady", 1);
  TickClock clock;
  ::unsetenv("GPUMON_STEP_CLOCK");
  EXPECT_FALSE(clock.trusted());
  std::this_thread::sleep_for(TickClock::kCalibration + 5ms);
  clock.resync();
  EXPECT_FALSE(clock.counting());
}

TEST(TickClock, ThisCpusCounterAgreesWithSteadyClock) {
  TickClock clock;
  if (!clock.trusted()) GTEST_SKIP() << "no invariant TSC on this CPU";
  std::this_thread::sleep_for(TickClock::kCalibration + 5ms);
  clock.resync();
  ASSERT_TRUE(clock.counting());
  auto last = clock.now();
  for (int i = 0; i < 20; ++i) {
    std::this_thread::sleep_for(5ms);
    EXPECT_LT(apart_us(clock), 100) << i;
    const auto t = clock.now();
    EXPECT_GE(t, last);
    last = t;
    clock.resync();
    EXPECT_TRUE(clock.counting()) << i;
  }
}

TEST_F(FakeCounter, AStepClockOverAJumpingCounterKeepsSaneStepTimes) {
  StepClock steps({}, TickClock(&fake_ticks));
  const auto run = [&](int n) {
    for (int i = 0; i < n; ++i) {
      std::this_thread::sleep_for(2ms);
      steps.step();
    }
  };
  run(15);  // past the calibration
  ASSERT_TRUE(steps.ticks().counting());
  skew_ns = -3'000'000;  // backwards
  run(600);              // past a resync (kResyncInterval)
  EXPECT_FALSE(steps.ticks().counting());
  steps.drain([](const std::string& line) {
    const auto j = nlohmann::json::parse(line);
    const double s = j["cpu_step_s"].get<double>();
    EXPECT_GE(s, 0) << line;  // the step that saw the jump counts 0, never less
    EXPECT_LT(s, 0.5) << line;
  });
}

TEST(StepClockWall, AStepClockWithoutACounterTimesOnSteadyClock) {
  StepClock steps({}, TickClock(nullptr));
  for (int i = 0; i < 3; ++i) {
    std::this_thread::sleep_for(TickClock::kCalibration);
    steps.step();
  }
  EXPECT_FALSE(steps.ticks().counting());
  int n = 0;
  steps.drain([&](const std::string& line) {
    EXPECT_GE(nlohmann::json::parse(line)["cpu_step_s"].get<double>(), 0.019) << line;
    ++n;
  });
  EXPECT_EQ(n, 3);
}

TEST(StepClockWall, StepStartsAreOnTheWallClock) {
  StepClock steps;
  std::this_thread::sleep_for(2ms);
  steps.step();
  const double wall =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  steps.drain([&](const std::string& line) {
    const auto j = nlohmann::json::parse(line);
    EXPECT_NEAR(j["t_end"].get<double>(), wall, 0.01);
  });
}

}  // namespace
}  // namespace gpumon::client
