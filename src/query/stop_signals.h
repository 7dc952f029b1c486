// SPDX-License-Identifier: MIT
// Signal handling of a running query: SIGINT and SIGTERM end the loop cleanly (exit 0, as
// nvidia-smi does on Ctrl-C), and SIGPIPE is ignored so a closed pipe (`| head -3`) shows up as a
// write error (EPIPE) that the command turns into a quiet exit 0. SteadyLoopClock sleeps on
// CLOCK_MONOTONIC and wakes as soon as a stop signal arrives.
//
// Thread-safety: one ScopedStopSignals at a time per process; the handlers only set a flag.
#pragma once

#include <signal.h>

#include "query/loop_schedule.h"

namespace gpumon::query {

class ScopedStopSignals {
 public:
  /// Installs the handlers (without SA_RESTART) and clears the stop flag.
  ScopedStopSignals();
  /// Restores the previous handlers.
  ~ScopedStopSignals();
  ScopedStopSignals(const ScopedStopSignals&) = delete;
  ScopedStopSignals& operator=(const ScopedStopSignals&) = delete;

  /// Whether SIGINT or SIGTERM arrived since construction.
  static bool stop_requested();

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
  struct sigaction old_pipe_ {};
};

/// The real clock: steady_clock, sleeping with clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)
/// and interrupted by ScopedStopSignals' flag.
class SteadyLoopClock final : public LoopClock {
 public:
  TimePoint now() override;
  bool sleep_until(TimePoint deadline) override;
  bool stop_requested() override;
};

}  // namespace gpumon::query
