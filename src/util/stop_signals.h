// SPDX-License-Identifier: MIT
// The one way a gpumon command learns that it should stop: SIGINT and SIGTERM set a flag (and
// wake a sleeper at once through a self-pipe), and SIGPIPE is ignored so a closed pipe
// (`| head -3`) shows up as a write error (EPIPE) that the command turns into a quiet exit.
// A second signal while the first is being honoured kills the process (an NVML call may hang),
// unless the command waits for a child that got the same Ctrl-C (`gpumon record -- CMD`).
//
// Thread-safety: one ScopedStopSignals at a time per process; the handlers only set a flag;
// the static functions may be called from any thread.
#pragma once

#include <signal.h>

#include <chrono>

namespace gpumon::util {

class ScopedStopSignals {
 public:
  enum class Second { kKills, kIsNoted };
  /// Installs the handlers (without SA_RESTART) and clears the flag.
  explicit ScopedStopSignals(Second second = Second::kKills);
  /// Restores the previous handlers.
  ~ScopedStopSignals();
  ScopedStopSignals(const ScopedStopSignals&) = delete;
  ScopedStopSignals& operator=(const ScopedStopSignals&) = delete;

  /// Whether SIGINT or SIGTERM arrived since construction (or the last clear()).
  static bool stop_requested();
  /// The last of them to arrive (SIGINT, SIGTERM), 0 when none.
  static int last_signal();
  /// Forgets the signals that arrived (a command that passed one on to its child).
  static void clear();
  /// Sleeps until `deadline` on CLOCK_MONOTONIC; returns false at once when a stop signal
  /// arrives first (or had arrived).
  static bool sleep_until(std::chrono::steady_clock::time_point deadline);
  static bool sleep_for(std::chrono::steady_clock::duration d) {
    return sleep_until(std::chrono::steady_clock::now() + d);
  }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
  struct sigaction old_pipe_ {};
};

}  // namespace gpumon::util
