// SPDX-License-Identifier: MIT
#include "diagnose/throttle.h"

#include <algorithm>

namespace gpumon::diagnose {

ThrottleCounts sample_throttle(std::uint64_t reasons, const std::optional<double>& sm_clock_mhz,
                               const std::optional<double>& max_sm_clock_mhz) {
  const ThrottleCauses c = throttle_causes(reasons, sm_clock_mhz, max_sm_clock_mhz);
  return {c.thermal ? 1 : 0, c.power_cap ? 1 : 0, c.hw_slowdown ? 1 : 0};
}

ThrottleCounts point_throttle(const GpuPoint& p, const std::optional<double>& max_sm_clock_mhz) {
  if (p.samples > 1 || p.span_ms > 0)
    return {p.thermal_samples, p.power_samples, p.hw_slowdown_samples};
  if (!p.clock_reasons) return {};
  return sample_throttle(*p.clock_reasons, p.sm_clock_mhz,
                         p.max_sm_clock_mhz ? p.max_sm_clock_mhz : max_sm_clock_mhz);
}

std::int32_t samples_throttled(const GpuPoint& p, const std::optional<double>& max_sm_clock_mhz) {
  const auto c = point_throttle(p, max_sm_clock_mhz);
  if (p.samples > 1 || p.span_ms > 0) return std::max({c.thermal, c.power, c.hw_slowdown});
  return c.any() ? 1 : 0;
}

}  // namespace gpumon::diagnose
