// SPDX-License-Identifier: MIT
// FakeClock: a Clock whose time moves only when the sampler sleeps (it jumps to the deadline)
// or when a fake backend charges a call's cost (advance()). Sleeping at or past end() parks
// the sampler until stop is requested and lets the test know (wait_until_parked()), so a test
// runs a whole schedule deterministically and at full speed. Test-only; header-only.
//
// Thread-safety: every member is safe from any thread.
#pragma once

#include <condition_variable>
#include <mutex>

#include "sampler/clock.h"

namespace gpumon::testing {

class FakeClock final : public Clock {
 public:
  /// Time starts at `start` (an arbitrary steady time; wall time is the epoch plus it).
  explicit FakeClock(MonoClock::time_point start = MonoClock::time_point(std::chrono::hours(1)))
      : now_(start), end_(MonoClock::time_point::max()) {}

  MonoClock::time_point now() override {
    std::lock_guard lock(mutex_);
    return now_;
  }
  WallClock::time_point wall_now() override {
    std::lock_guard lock(mutex_);
    return WallClock::time_point(
        std::chrono::duration_cast<WallClock::duration>(now_.time_since_epoch()));
  }
  bool sleep_until(MonoClock::time_point deadline, StopSignal& stop) override {
    {
      std::lock_guard lock(mutex_);
      ++sleeps_;
      if (deadline < end_) {
        if (deadline > now_) now_ = deadline;
        return stop.requested();
      }
      if (end_ > now_) now_ = end_;
      parked_ = true;
    }
    parked_cv_.notify_all();
    stop.wait();
    return true;
  }

  /// Fake time moves only with the calls' charged costs, so a reader is never late: waits for
  /// `done` however long the readers take in real time.
  bool wait_for_readers(MonoClock::time_point deadline, StopSignal& done) override {
    (void)deadline;
    done.wait();
    return true;
  }

  /// Moves time forward by `d` (a backend call's cost).
  void advance(MonoClock::duration d) {
    std::lock_guard lock(mutex_);
    now_ += d;
  }
  /// A sleep that reaches `end` parks the sampler.
  void set_end(MonoClock::time_point end) {
    std::lock_guard lock(mutex_);
    end_ = end;
  }
  /// Blocks until the sampler has parked at end().
  void wait_until_parked() {
    std::unique_lock lock(mutex_);
    parked_cv_.wait(lock, [this] { return parked_; });
  }
  long sleeps() const {
    std::lock_guard lock(mutex_);
    return sleeps_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable parked_cv_;
  MonoClock::time_point now_;
  MonoClock::time_point end_;
  bool parked_ = false;
  long sleeps_ = 0;
};

}  // namespace gpumon::testing
