// SPDX-License-Identifier: MIT
// The one way a gpumon command learns that it should stop: SIGINT, SIGTERM and SIGHUP (the
// terminal or SSH session went away) set a flag (and wake a sleeper at once through a
// self-pipe), so every command stops cleanly on each: the recording closed, the socket removed.
// SIGPIPE is ignored so a closed pipe (`| head -3`) shows up as a write error (EPIPE) that the
// command turns into a quiet exit, and SIGXFSZ so a write past the file-size limit (`ulimit -f`)
// fails with EFBIG, which the recording reports like a full disk instead of the kernel killing
// the process mid-write. A command that starts a child restores both in it (child_sigdefault()).
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

  /// Whether SIGINT, SIGTERM or SIGHUP arrived since construction (or the last clear()).
  static bool stop_requested();
  /// The last of them to arrive (SIGINT, SIGTERM, SIGHUP), 0 when none.
  static int last_signal();
  /// Forgets the signals that arrived (a command that passed one on to its child).
  static void clear();
  /// Sleeps until `deadline` on CLOCK_MONOTONIC; returns false at once when a stop signal
  /// arrives first (or had arrived).
  static bool sleep_until(std::chrono::steady_clock::time_point deadline);
  static bool sleep_for(std::chrono::steady_clock::duration d) {
    return sleep_until(std::chrono::steady_clock::now() + d);
  }
  /// The signals ignored here that a child must get back at their default action (they stay
  /// ignored across exec): for posix_spawnattr_setsigdefault().
  static sigset_t child_sigdefault();

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
  struct sigaction old_hup_ {};
  struct sigaction old_pipe_ {};
  struct sigaction old_xfsz_ {};
};

}  // namespace gpumon::util
