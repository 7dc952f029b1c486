// SPDX-License-Identifier: MIT
#include "query/loop_schedule.h"

#include <gtest/gtest.h>

#include "query/test_backend.h"

namespace gpumon::query {
namespace {

using std::chrono::milliseconds;
using TimePoint = LoopClock::TimePoint;

const TimePoint kT0 = TimePoint(std::chrono::hours(1));

TEST(LoopSchedule, SlotsAreMultiplesOfTheIntervalFromT0) {
  LoopSchedule s(kT0, milliseconds(200));
  EXPECT_EQ(s.next(kT0 + milliseconds(3)), kT0 + milliseconds(200));
  EXPECT_EQ(s.next(kT0 + milliseconds(250)), kT0 + milliseconds(400));  // no drift from 50 ms
  EXPECT_EQ(s.next(kT0 + milliseconds(400)), kT0 + milliseconds(600));
  EXPECT_EQ(s.skipped(), 0U);
}

TEST(LoopSchedule, MissedSlotsAreSkippedNotMadeUp) {
  LoopSchedule s(kT0, milliseconds(100));
  // The first sample took 350 ms: slots 1..3 have passed; the next is slot 4, not a burst.
  EXPECT_EQ(s.next(kT0 + milliseconds(350)), kT0 + milliseconds(400));
  EXPECT_EQ(s.skipped(), 3U);
  // Exactly on a slot boundary: that slot, no sleep, no skip.
  EXPECT_EQ(s.next(kT0 + milliseconds(500)), kT0 + milliseconds(500));
  EXPECT_EQ(s.skipped(), 3U);
}

TEST(LoopSchedule, NeverScheduledInThePast) {
  LoopSchedule s(kT0, milliseconds(7));
  TimePoint now = kT0;
  for (int i = 0; i < 1000; ++i) {
    now += milliseconds((i * 37) % 23);
    const TimePoint next = s.next(now);
    EXPECT_GE(next, now);
    EXPECT_EQ((next - kT0) % milliseconds(7), milliseconds(0));
    now = next;
  }
}

TEST(RunLoop, SingleSampleWithoutInterval) {
  testing::ManualClock clock;
  int taken = 0;
  EXPECT_EQ(run_loop(clock, std::nullopt, 1, [&] { return ++taken, true; }), LoopEnd::kDone);
  EXPECT_EQ(taken, 1);
  EXPECT_TRUE(clock.sleeps.empty());
}

TEST(RunLoop, CountStopsAfterNSamplesOnTheSchedule) {
  testing::ManualClock clock;
  clock.time = kT0;
  int taken = 0;
  const auto end = run_loop(clock, milliseconds(200), 4, [&] {
    ++taken;
    clock.time += milliseconds(30);  // each sample takes 30 ms
    return true;
  });
  EXPECT_EQ(end, LoopEnd::kDone);
  EXPECT_EQ(taken, 4);
  ASSERT_EQ(clock.sleeps.size(), 3U);
  EXPECT_EQ(clock.sleeps[0], kT0 + milliseconds(200));
  EXPECT_EQ(clock.sleeps[2], kT0 + milliseconds(600));
}

TEST(RunLoop, StopRequestEndsTheLoop) {
  testing::ManualClock clock;
  int taken = 0;
  clock.on_sleep = [&](testing::ManualClock& c) { c.stop = taken == 3; };
  EXPECT_EQ(run_loop(clock, milliseconds(10), std::nullopt, [&] { return ++taken, true; }),
            LoopEnd::kStopped);
  EXPECT_EQ(taken, 3);
}

TEST(RunLoop, OutputEndStopsAtOnce) {
  testing::ManualClock clock;
  int taken = 0;
  EXPECT_EQ(run_loop(clock, milliseconds(10), std::nullopt, [&] { return ++taken < 2; }),
            LoopEnd::kOutputEnd);
  EXPECT_EQ(taken, 2);
}

}  // namespace
}  // namespace gpumon::query
