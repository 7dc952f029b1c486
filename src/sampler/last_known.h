// SPDX-License-Identifier: MIT
// LastKnown: the newest known reading of every catalog metric of one GPU, for the views that
// show "now" (the live view, /metrics, the JSON API). A tick carries only what was due in it:
// slow groups (temperature, clocks, limits: once a second), GPM, the driver's sample buffers,
// PCIe and energy come every few ticks, so the newest tick alone would flicker them to N/A.
//
// The rule, in one place: a reading is held until it is overdue: older than the hold given
// (hold_time(): max(3 intervals, 10 s)) or, for a metric that comes more rarely, than 1.5
// times the gap between its last two readings (the sampler stretches a slow task's period with
// the GPU count: PCIe throughput of 64 GPUs comes every ~26 s). Gaps over kMaxGap, and gaps
// with a failed read in them (missing for a reason other than not available), are outages,
// not a period, and are not learned. Tick time, never the wall clock; a lost or stale GPU
// drops every held reading (its last values would read as current) and the gaps learned.
// Recordings keep every tick as it came and never use this.
//
// Thread-safety: none; the owner guards it.
#pragma once

#include <array>
#include <bitset>
#include <chrono>
#include <optional>

#include "gpu/metric_catalog.h"
#include "sampler/sample_sink.h"

namespace gpumon {

/// How long a reading is held when newer ticks lack it: max(3 intervals, 10 s).
MonoClock::duration hold_time(std::chrono::milliseconds interval);
/// How long something that comes every `gap` is held: `hold`, or 1.5 gaps where longer (the
/// rule for readings here, and for the exporter's process lists).
MonoClock::duration held_for_gap(MonoClock::duration hold, MonoClock::duration gap);

class LastKnown {
 public:
  /// The longest gap between two readings of one metric taken as its period.
  static constexpr std::chrono::minutes kMaxGap{5};

  /// Folds in `s`, this GPU's sample of the tick at `t`, and drops what is overdue (`hold`,
  /// or 1.5 gaps where those are longer).
  void update(const DeviceSample& s, MonoClock::time_point t, MonoClock::duration hold);
  /// Drops the readings overdue at `now` (a tick that did not have this GPU).
  void expire(MonoClock::time_point now, MonoClock::duration hold);

  /// The held value of `id` in catalog units; nullopt when none is held.
  std::optional<double> value(MetricId id) const;
  /// Tick time of the held value of `id` (meaningful only while value(id) has one).
  MonoClock::time_point time(MetricId id) const;
  /// How long a reading of `id` is held: `hold`, or 1.5 of its learned gap where longer. For
  /// what is derived from it (a rate between two readings) to live as long.
  MonoClock::duration held_for(MetricId id, MonoClock::duration hold) const;
  /// Fills every metric `s` lacks from the held readings (as they were read, Missing kinds
  /// and all); `s.lost` and `s.stale` samples are left as they are.
  void fill(DeviceSample& s) const;

 private:
  DeviceSample held_;  ///< the readings as last read; only `have_` ones are meaningful
  std::bitset<kMetricCount> have_;
  std::bitset<kMetricCount> seen_;  ///< time_ holds a reading's time (held or since expired)
  std::array<MonoClock::time_point, kMetricCount> time_{};
  std::array<MonoClock::duration, kMetricCount> gap_{};  ///< between its last two readings
};

}  // namespace gpumon
