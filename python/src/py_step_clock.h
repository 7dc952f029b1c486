// SPDX-License-Identifier: MIT
// PyStepClock: the step clock (src/client/step_clock.h) as the Python Monitor holds it, with the
// on/off state its per-step calls (step_calls.h) check: switched off by the Monitor after an
// internal error or close(), and off in a forked child (a DataLoader worker), which must not
// time or send anything.
#pragma once

#include <pybind11/pybind11.h>

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "agent/agent_client.h"
#include "client/hand_over_schedule.h"
#include "client/step_clock.h"
#include "util/hot.h"

namespace gpumon::python {

class PyStepClock {
 public:
  using Clock = client::StepClock::Clock;

  PyStepClock(std::size_t keep_recent, double housekeeping_interval_s);

  client::StepClock& clock() { return clock_; }
  const client::StepClock& clock() const { return clock_; }

  /// True every housekeeping interval, or sooner once HandOverSchedule::kSteps steps wait.
  bool housekeeping_due() { return hand_over_.due(clock_); }

  /// On until switch_off(), and only in the process that made it.
  bool active() const { return on_ && agent::fork_generation() == generation_; }
  /// Off, and lets go of the attached client.
  void switch_off();

  /// fn() returns a torch.cuda.memory_stats()-like dict; None: no allocator stats.
  void set_allocator_source(pybind11::object fn, double interval_s);
  /// timer.record() -> int, timer.elapsed(a, b) -> seconds or None; None: no GPU time.
  void set_gpu_timer(pybind11::object timer, double interval_s);
  /// Hands the messages to `client`: a _gpumon.Client in C++, anything else through send().
  std::size_t hand_to(const pybind11::object& client);
  /// The client hand_over() writes to when it is a _gpumon.Client; any other (a test's
  /// stand-in) leaves the hand-over to the Monitor's Python housekeeping.
  void attach(pybind11::object client);
  /// The housekeeping a step call runs when it is due: hands the steps to the attached
  /// _gpumon.Client and writes them, all in C++ (a Python call here costs a cold training loop
  /// far more than the write; docs/PERFORMANCE.md "The hand-over"). True when the Monitor's
  /// Python housekeeping must run as well: no _gpumon.Client is attached, or the client lost
  /// the agent or received new findings since the last hand-over.
  GPUMON_COLD bool hand_over();
  /// The next hand_over() asks for the Monitor's housekeeping whatever the news (a finding
  /// callback registered after the findings arrived must still see them).
  void ask_housekeeping() { housekeeping_asked_ = true; }
  /// While on, every hand_over() asks for the Monitor's housekeeping (about once a second): the
  /// Monitor waits for torch to be imported to name its device.
  void keep_housekeeping(bool on) { housekeeping_kept_ = on; }

 private:
  client::StepClock clock_;
  client::HandOverSchedule hand_over_;
  bool on_ = true;
  std::uint64_t generation_;
  pybind11::object client_obj_;           // keeps client_ alive
  agent::AgentClient* client_ = nullptr;  // nullptr: not a _gpumon.Client
  std::uint64_t seen_disconnects_ = 0;
  std::uint64_t seen_findings_ = 0;
  bool housekeeping_asked_ = false;
  bool housekeeping_kept_ = false;
};

}  // namespace gpumon::python
