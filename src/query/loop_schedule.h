// SPDX-License-Identifier: MIT
// The sampling schedule of `gpumon query -l/-lms`: sample k is due at t0 + k * interval on the
// steady clock, so time spent sampling and printing does not add up into drift. A slot that has
// already passed when the previous sample finishes is skipped, never made up for with a burst,
// and the loop never sleeps a negative time.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

namespace gpumon::query {

/// Time source and sleeper of the loop; tests inject a fake one.
class LoopClock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  virtual ~LoopClock() = default;
  virtual TimePoint now() = 0;
  /// Sleeps until `deadline` (returns at once if it has passed). Returns false when a stop was
  /// requested (Ctrl-C) before or during the sleep.
  virtual bool sleep_until(TimePoint deadline) = 0;
  /// Whether a stop was requested.
  virtual bool stop_requested() = 0;
};

/// The real clock: steady_clock, sleeping until a stop signal (util/stop_signals.h).
class SteadyLoopClock final : public LoopClock {
 public:
  TimePoint now() override { return std::chrono::steady_clock::now(); }
  bool sleep_until(TimePoint deadline) override;
  bool stop_requested() override;
};

class LoopSchedule {
 public:
  using TimePoint = LoopClock::TimePoint;
  /// `interval` must be positive.
  LoopSchedule(TimePoint t0, std::chrono::nanoseconds interval) : t0_(t0), interval_(interval) {}

  /// The next slot for a sample, given that the previous one finished at `now`: the first slot
  /// at or after `now` that comes after the previous slot.
  TimePoint next(TimePoint now);
  /// Slots passed over because sampling overran them.
  std::uint64_t skipped() const { return skipped_; }

 private:
  TimePoint t0_;
  std::chrono::nanoseconds interval_;
  std::int64_t slot_ = 0;
  std::uint64_t skipped_ = 0;
};

/// How a loop ended.
enum class LoopEnd {
  kDone,       ///< took every sample asked for
  kStopped,    ///< SIGINT / SIGTERM
  kOutputEnd,  ///< take_sample returned false (the output went away)
};

/// Calls `take_sample` now, then on the schedule, `samples` times (nullopt: until stopped).
/// `interval` nullopt means one sample only. take_sample returns false to end the loop.
LoopEnd run_loop(LoopClock& clock, std::optional<std::chrono::milliseconds> interval,
                 std::optional<std::uint64_t> samples, const std::function<bool()>& take_sample);

}  // namespace gpumon::query
