// SPDX-License-Identifier: MIT
// HandOverSchedule: when the step clock's queued steps go to the agent client, for both clients
// (the C++ Monitor and the Python PyStepClock). A hand-over formats the steps' messages and
// writes them in one go; doing that every interval (Python: 1 s; C++: write_interval, 200 ms)
// rather than every step keeps a cold training loop's steps short (docs/PERFORMANCE.md, "The
// hand-over's interval").
#pragma once

#include <cstddef>

#include "client/step_clock.h"

namespace gpumon::client {

class HandOverSchedule {
 public:
  using Clock = StepClock::Clock;

  /// Steps waiting that make a hand-over due before its interval: a fast loop's batch stays
  /// far under the client's queue cap (256 KiB; a step's line is ~200 bytes).
  static constexpr std::size_t kSteps = 512;

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
