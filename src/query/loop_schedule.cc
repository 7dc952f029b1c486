// SPDX-License-Identifier: MIT
#include "query/loop_schedule.h"

#include "util/stop_signals.h"

namespace gpumon::query {

LoopSchedule::TimePoint LoopSchedule::next(TimePoint now) {
  std::int64_t slot = slot_ + 1;
  const auto due = t0_ + slot * interval_;
  if (now > due) {
    // Round up: the first slot at or after `now`.
    const auto late = now - t0_;
    const std::int64_t at_or_after = (late + interval_ - std::chrono::nanoseconds(1)) / interval_;
    skipped_ += static_cast<std::uint64_t>(at_or_after - slot);
    slot = at_or_after;
  }
  slot_ = slot;
  return t0_ + slot_ * interval_;
}

LoopEnd run_loop(LoopClock& clock, std::optional<std::chrono::milliseconds> interval,
                 std::optional<std::uint64_t> samples, const std::function<bool()>& take_sample) {
  std::optional<LoopSchedule> schedule;
  if (interval) schedule.emplace(clock.now(), *interval);
  for (std::uint64_t taken = 0;;) {
    if (clock.stop_requested()) return LoopEnd::kStopped;
    if (!take_sample()) return LoopEnd::kOutputEnd;
    ++taken;
    if (!schedule || (samples && taken >= *samples)) return LoopEnd::kDone;
    if (!clock.sleep_until(schedule->next(clock.now()))) return LoopEnd::kStopped;
  }
}

bool SteadyLoopClock::sleep_until(TimePoint deadline) {
  return util::ScopedStopSignals::sleep_until(deadline);
}

bool SteadyLoopClock::stop_requested() {
  return util::ScopedStopSignals::stop_requested();
}

}  // namespace gpumon::query
