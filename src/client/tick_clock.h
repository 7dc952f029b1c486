// SPDX-License-Identifier: MIT
// TickClock: steady_clock's time, read from the CPU's time-stamp counter where it can be trusted.
//
// The step clock reads the time three times a step. A steady_clock read is a vDSO call that,
// after a training step has evicted its code and data from the caches and TLBs, costs ~1.2 µs
// (docs/PERFORMANCE.md "The step clock's time source"); rdtsc is one instruction, no memory.
// The TSC is used only where CPUID says it is invariant (constant rate, running in every
// power state), and only once calibrated: resync() pairs it with steady_clock, the rate comes
// from the first pair to the latest, and times are given from the latest, so they stay on
// steady_clock's timeline. Until the first calibration (kCalibration after the first pair),
// with GPUMON_STEP_CLOCK=steady, on other CPUs, and for good once a resync finds the TSC away
// from steady_clock by more than kMaxDisagreement (plus 0.01 % of the time since the last
// pair), now() is steady_clock::now().
//
// Thread-safety: one thread at a time (the step clock's).
#pragma once

#include <chrono>
#include <cstdint>

#include "util/hot.h"

namespace gpumon::client {

class TickClock {
 public:
  using Steady = std::chrono::steady_clock;
  using time_point = Steady::time_point;
  /// The counter: rdtsc unless a test gives its own.
  using Ticks = std::uint64_t (*)();

  static constexpr std::chrono::milliseconds kCalibration{20};
  static constexpr std::chrono::microseconds kMaxDisagreement{200};

  /// Reads GPUMON_STEP_CLOCK and CPUID; takes the first pair.
  TickClock();
  /// A test's counter, trusted as an invariant TSC would be.
  explicit TickClock(Ticks ticks);

  time_point now() const { return ns_per_tick_ == 0 ? Steady::now() : now_at(ticks_()); }

  /// Pairs the counter with steady_clock: calibrates, checks and re-anchors. A few µs.
  GPUMON_COLD void resync();
  /// True while now() reads the counter.
  bool counting() const { return ns_per_tick_ != 0; }
  /// False once the counter disagreed with steady_clock, or where it is not used at all.
  bool trusted() const { return ticks_ != nullptr; }

 private:
  struct Pair {
    std::uint64_t ticks = 0;
    time_point at;
  };
  time_point now_at(std::uint64_t ticks) const {
    const auto d = static_cast<std::int64_t>(ticks - anchor_.ticks);  // < 0: another CPU's
    return anchor_.at + std::chrono::nanoseconds(
                            static_cast<std::int64_t>(static_cast<double>(d) * ns_per_tick_));
  }
  GPUMON_COLD Pair read_pair() const;
  void distrust();

  // What now() reads first (one cache line), the calibration's first pair after.
  Ticks ticks_ = nullptr;   // nullptr: steady_clock only
  double ns_per_tick_ = 0;  // 0: not calibrated
  Pair anchor_;
  Pair first_;
};

}  // namespace gpumon::client
