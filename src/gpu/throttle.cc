// SPDX-License-Identifier: MIT
#include "gpu/throttle.h"

namespace gpumon {

ThrottleCauses throttle_causes(std::uint64_t reasons, const std::optional<double>& sm_clock_mhz,
                               const std::optional<double>& max_sm_clock_mhz) {
  ThrottleCauses c;
  const bool known = sm_clock_mhz && max_sm_clock_mhz && *max_sm_clock_mhz > 0;
  if (known && *sm_clock_mhz >= kAtMaxClockRatio * *max_sm_clock_mhz) return c;
  c.thermal = (reasons & kThermalReasons) != 0;
  c.power_cap = (reasons & kPowerCapReasons) != 0 && known &&
                *sm_clock_mhz < kPowerCapClockRatio * *max_sm_clock_mhz;
  c.hw_slowdown = (reasons & kHwSlowdownReasons) != 0;
  return c;
}

}  // namespace gpumon
