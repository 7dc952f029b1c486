// SPDX-License-Identifier: MIT
// PyStepClock: the step clock (src/client/step_clock.h) as the Python Monitor holds it, with the
// on/off state its per-step calls (step_calls.h) check: switched off by the Monitor after an
// internal error or close(), and off in a forked child (a DataLoader worker), which must not
// time or send anything.
#pragma once

#include <pybind11/pybind11.h>

#include <chrono>
#include <cstddef>

#include "client/step_clock.h"

namespace gpumon::python {

/// Bumped in every forked child; fork_generation() is one relaxed load.
void register_fork_handler();
unsigned fork_generation();

class PyStepClock {
 public:
  using Clock = client::StepClock::Clock;

  PyStepClock(std::size_t keep_recent, double housekeeping_interval_s);

  client::StepClock& clock() { return clock_; }
  const client::StepClock& clock() const { return clock_; }

  /// True at most every housekeeping interval.
  bool housekeeping_due() {
    const auto now = Clock::now();
    if (now < due_) return false;
    due_ = now + housekeeping_;
    return true;
  }

  /// On until switch_off(), and only in the process that made it.
  bool active() const { return on_ && fork_generation() == generation_; }
  void switch_off() { on_ = false; }

  /// fn() returns a torch.cuda.memory_stats()-like dict; None: no allocator stats.
  void set_allocator_source(pybind11::object fn, double interval_s);
  /// timer.record() -> int, timer.elapsed(a, b) -> seconds or None; None: no GPU time.
  void set_gpu_timer(pybind11::object timer, double interval_s);
  /// Hands the messages to `client`: a _gpumon.Client in C++, anything else through send().
  std::size_t hand_to(const pybind11::object& client);

 private:
  client::StepClock clock_;
  Clock::duration housekeeping_;
  Clock::time_point due_{};
  bool on_ = true;
  unsigned generation_;
};

}  // namespace gpumon::python
