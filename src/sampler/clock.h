// SPDX-License-Identifier: MIT
// The sampler's clock and its stop signal. The sampler reads time and waits only through a
// Clock, so tests step time without sleeping (testing/fake_clock.h); SteadyClock is the real
// one.
//
// Thread-safety: StopSignal is safe from any thread. A Clock is called by the sampler thread
// (now, wall_now, sleep_until, wait_for_readers) and by its reader threads (now); implementations
// say what else may call them.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "sampler/sample_sink.h"

namespace gpumon {

/// A stop request that wakes a waiting thread at once (condition variable, no polling).
class StopSignal {
 public:
  void request() {
    {
      std::lock_guard lock(mutex_);
      requested_ = true;
    }
    cv_.notify_all();
  }
  bool requested() const {
    std::lock_guard lock(mutex_);
    return requested_;
  }
  /// Waits until `deadline` (steady clock) or a stop request; true when stop was requested.
  bool wait_until(MonoClock::time_point deadline) {
    std::unique_lock lock(mutex_);
    return cv_.wait_until(lock, deadline, [this] { return requested_; });
  }
  /// Waits for a stop request however long it takes.
  void wait() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [this] { return requested_; });
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool requested_ = false;
};

class Clock {
 public:
  virtual ~Clock() = default;
  virtual MonoClock::time_point now() = 0;
  virtual WallClock::time_point wall_now() = 0;
  /// Returns at `deadline` (at once when it has passed) or as soon as `stop` is requested;
  /// true when stop was requested.
  virtual bool sleep_until(MonoClock::time_point deadline, StopSignal& stop) = 0;
  /// Waits until `done` is requested (the tick's reader finished) or `deadline`; true when done.
  /// A clock that jumps to its deadlines (a test's) must override it, or every reader is late.
  virtual bool wait_for_readers(MonoClock::time_point deadline, StopSignal& done) {
    return sleep_until(deadline, done);
  }
};

/// std::chrono::steady_clock and system_clock. Safe from any thread.
class SteadyClock final : public Clock {
 public:
  MonoClock::time_point now() override { return MonoClock::now(); }
  WallClock::time_point wall_now() override { return WallClock::now(); }
  bool sleep_until(MonoClock::time_point deadline, StopSignal& stop) override {
    return stop.wait_until(deadline);
  }
};

}  // namespace gpumon
