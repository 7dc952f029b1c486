// SPDX-License-Identifier: MIT
#include "gpu/gpu_backend.h"

namespace gpumon {

void merge_groups(DeviceSample& into, const DeviceSample& from, MetricSet groups) {
  using G = MetricGroup;
  if (from.lost) into.lost = true;
  if (groups.has(G::kUtilization)) {
    into.utilization_gpu_pct = from.utilization_gpu_pct;
    into.utilization_memory_pct = from.utilization_memory_pct;
  }
  if (groups.has(G::kMemory)) {
    into.memory_total_bytes = from.memory_total_bytes;
    into.memory_reserved_bytes = from.memory_reserved_bytes;
    into.memory_used_bytes = from.memory_used_bytes;
    into.memory_free_bytes = from.memory_free_bytes;
  }
  if (groups.has(G::kTemperature)) into.temperature_gpu_c = from.temperature_gpu_c;
  if (groups.has(G::kMemoryTemperature)) into.temperature_memory_c = from.temperature_memory_c;
  if (groups.has(G::kPower)) into.power_draw_w = from.power_draw_w;
  if (groups.has(G::kPowerInstant)) into.power_draw_instant_w = from.power_draw_instant_w;
  if (groups.has(G::kPowerLimit)) into.power_limit_w = from.power_limit_w;
  if (groups.has(G::kEnergy)) into.energy_mj = from.energy_mj;
  if (groups.has(G::kSmClock)) into.sm_clock_mhz = from.sm_clock_mhz;
  if (groups.has(G::kMemClock)) into.mem_clock_mhz = from.mem_clock_mhz;
  if (groups.has(G::kGraphicsClock)) into.graphics_clock_mhz = from.graphics_clock_mhz;
  if (groups.has(G::kPstate)) into.pstate = from.pstate;
  if (groups.has(G::kFan)) into.fan_speed_pct = from.fan_speed_pct;
  if (groups.has(G::kClockEvents)) into.clock_event_reasons = from.clock_event_reasons;
  if (groups.has(G::kEcc)) {
    into.ecc_corrected_volatile = from.ecc_corrected_volatile;
    into.ecc_uncorrected_volatile = from.ecc_uncorrected_volatile;
  }
}

}  // namespace gpumon
