// SPDX-License-Identifier: MIT
#include "gpu/gpu_types.h"

#include <array>
#include <utility>

namespace gpumon {

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::vector<std::string> clock_event_reason_names(std::uint64_t mask) {
  static constexpr std::array<std::pair<std::uint64_t, const char*>, 9> kNames{{
      {kClockEventGpuIdle, "gpu_idle"},
      {kClockEventApplicationsClocksSetting, "applications_clocks_setting"},
      {kClockEventSwPowerCap, "sw_power_cap"},
      {kClockEventHwSlowdown, "hw_slowdown"},
      {kClockEventSyncBoost, "sync_boost"},
      {kClockEventSwThermalSlowdown, "sw_thermal_slowdown"},
      {kClockEventHwThermalSlowdown, "hw_thermal_slowdown"},
      {kClockEventHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
      {kClockEventDisplayClockSetting, "display_clock_setting"},
  }};
  std::vector<std::string> out;
  std::uint64_t known = 0;
  for (const auto& [bit, name] : kNames) {
    known |= bit;
    if ((mask & bit) != 0) out.emplace_back(name);
  }
  if ((mask & ~known) != 0) out.emplace_back("other");
  return out;
}

}  // namespace gpumon
