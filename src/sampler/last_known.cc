// SPDX-License-Identifier: MIT
#include "sampler/last_known.h"

#include <algorithm>
#include <cmath>

namespace gpumon {

MonoClock::duration hold_time(std::chrono::milliseconds interval) {
  return std::max<MonoClock::duration>(3 * interval, std::chrono::seconds(10));
}

void LastKnown::update(const DeviceSample& s, MonoClock::time_point t, MonoClock::duration hold) {
  const bool gone = s.lost || s.stale;
  if (gone) {
    have_.reset();
    seen_.reset();
    gap_.fill(MonoClock::duration::zero());
  }
  for (const MetricInfo& m : metric_catalog()) {
    if (gone && m.id != MetricId::kLost) continue;  // only `lost` itself is current
    const auto i = static_cast<std::size_t>(m.id);
    const std::optional<double> v = metric_value(s, m.id);
    if (!v || std::isnan(*v)) {
      // A read that failed (not merely not due) breaks the period: the gap to the next good
      // reading is an outage, not one to hold that reading for.
      const auto why = metric_missing(s, m.id);
      if (why && *why != Missing::kNotAvailable) {
        seen_.reset(i);
        gap_[i] = MonoClock::duration::zero();
      }
      continue;
    }
    copy_metric(held_, s, m.id);
    if (seen_.test(i) && t > time_[i]) {
      const MonoClock::duration gap = t - time_[i];
      if (gap <= kMaxGap) gap_[i] = gap;
    }
    have_.set(i);
    seen_.set(i);
    time_[i] = t;
  }
  expire(t, hold);
}

void LastKnown::expire(MonoClock::time_point now, MonoClock::duration hold) {
  for (std::size_t i = 0; i < kMetricCount; ++i)
    if (have_.test(i) && now - time_[i] > held_for(static_cast<MetricId>(i), hold)) have_.reset(i);
}

MonoClock::duration held_for_gap(MonoClock::duration hold, MonoClock::duration gap) {
  return std::max(hold, gap * 3 / 2);
}

MonoClock::duration LastKnown::held_for(MetricId id, MonoClock::duration hold) const {
  return held_for_gap(hold, gap_[static_cast<std::size_t>(id)]);
}

std::optional<double> LastKnown::value(MetricId id) const {
  if (!have_.test(static_cast<std::size_t>(id))) return std::nullopt;
  return metric_value(held_, id);
}

MonoClock::time_point LastKnown::time(MetricId id) const {
  return time_[static_cast<std::size_t>(id)];
}

void LastKnown::fill(DeviceSample& s) const {
  if (s.lost || s.stale) return;
  for (const MetricInfo& m : metric_catalog()) {
    if (!have_.test(static_cast<std::size_t>(m.id)) || metric_value(s, m.id)) continue;
    copy_metric(s, held_, m.id);
  }
}

}  // namespace gpumon
