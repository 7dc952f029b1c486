// SPDX-License-Identifier: MIT
// HandOverSchedule: when the step clock's queued steps go to the agent client, for both clients
// (the C++ Monitor and the Python PyStepClock). A hand-over formats the steps' messages and
// writes them in one go; doing that every interval (kInterval, 1 s, unless the caller sets
// another) rather than every step keeps a cold training loop's steps short
// (docs/PERFORMANCE.md, "The hand-over's interval": 1 s rather than 0.2 s took a 0.9 ms loop's
// slowdown from +0.68 % to +0.42 %).
#pragma once

#include <chrono>
#include <cstddef>

#include "client/step_clock.h"

namespace gpumon::client {

class HandOverSchedule {
 public:
  using Clock = StepClock::Clock;

  /// Steps waiting that make a hand-over due before its interval: a fast loop's batch stays
  /// far under the client's queue cap (256 KiB; a step's line is ~200 bytes).
  static constexpr std::size_t kSteps = 512;
  /// Both clients' default interval (MonitorOptions::write_interval, _gpumon.StepClock).
  static constexpr std::chrono::milliseconds kInterval{1000};

  explicit HandOverSchedule(Clock::duration interval) : interval_(interval) {}

  /// True every interval, or sooner once kSteps steps wait; the first call is due. Runs right
  /// after a clock call and takes its time (a read of its own would cost a cold loop ~1 µs).
  bool due(const StepClock& clock) {
    const Clock::time_point now = clock.last_now();
    if (now < due_ && clock.queued() < kSteps) return false;
    due_ = now + interval_;
    return true;
  }

 private:
  Clock::duration interval_;
  Clock::time_point due_{};
};

}  // namespace gpumon::client
