// SPDX-License-Identifier: MIT
#include "gpu/metric_catalog.h"

namespace gpumon {
namespace {

using M = MetricId;
// clang-format off
constexpr std::array<MetricInfo, kMetricCount> kCatalog{{
  {M::kUtilizationGpuPct, "utilization_gpu_pct", "%", "nvmlDeviceGetUtilizationRates", "% of time a kernel ran over the driver's last 1/6-1 s", 1},
  {M::kUtilizationMemoryPct, "utilization_memory_pct", "%", "nvmlDeviceGetUtilizationRates", "% of time memory was read or written over the last 1/6-1 s", 1},
  {M::kMemoryTotalBytes, "memory_total_bytes", "bytes", "nvmlDeviceGetMemoryInfo_v2", "instant", 1},
  {M::kMemoryReservedBytes, "memory_reserved_bytes", "bytes", "nvmlDeviceGetMemoryInfo_v2", "instant", 1},
  {M::kMemoryUsedBytes, "memory_used_bytes", "bytes", "nvmlDeviceGetMemoryInfo_v2", "instant", 1},
  {M::kMemoryFreeBytes, "memory_free_bytes", "bytes", "nvmlDeviceGetMemoryInfo_v2", "instant", 1},
  {M::kTemperatureGpuC, "temperature_gpu_c", "C", "nvmlDeviceGetTemperature", "instant", 1},
  {M::kTemperatureMemoryC, "temperature_memory_c", "C", "nvmlDeviceGetFieldValues(MEMORY_TEMP)", "instant", 1},
  {M::kPowerDrawW, "power_draw_w", "W", "nvmlDeviceGetPowerUsage", "1 s average on Ampere and newer", 0.001},
  {M::kPowerDrawInstantW, "power_draw_instant_w", "W", "nvmlDeviceGetFieldValues(POWER_INSTANT)", "instant", 0.001},
  {M::kPowerLimitW, "power_limit_w", "W", "nvmlDeviceGetEnforcedPowerLimit", "instant", 0.001},
  {M::kEnergyJ, "energy_j", "J", "nvmlDeviceGetTotalEnergyConsumption", "since the driver loaded", 0.001},
  {M::kSmClockMhz, "sm_clock_mhz", "MHz", "nvmlDeviceGetClockInfo(SM)", "instant", 1},
  {M::kMemClockMhz, "mem_clock_mhz", "MHz", "nvmlDeviceGetClockInfo(MEM)", "instant", 1},
  {M::kGraphicsClockMhz, "graphics_clock_mhz", "MHz", "nvmlDeviceGetClockInfo(GRAPHICS)", "instant", 1},
  {M::kPstate, "pstate", "", "nvmlDeviceGetPerformanceState", "instant", 1},
  {M::kFanSpeedPct, "fan_speed_pct", "%", "nvmlDeviceGetFanSpeed", "instant", 1},
  {M::kClockEventReasons, "clock_event_reasons", "bitmask", "nvmlDeviceGetCurrentClocksEventReasons", "instant", 1},
  {M::kEccCorrectedVolatile, "ecc_corrected_volatile", "count", "nvmlDeviceGetTotalEccErrors", "since the driver loaded", 1},
  {M::kEccUncorrectedVolatile, "ecc_uncorrected_volatile", "count", "nvmlDeviceGetTotalEccErrors", "since the driver loaded", 1},
  {M::kSmActiveRatio, "sm_active_ratio", "ratio", "nvmlGpmMetricsGet(SM_UTIL)", "average since the previous GPM sample", 0.0001},
  {M::kSmOccupancyRatio, "sm_occupancy_ratio", "ratio", "nvmlGpmMetricsGet(SM_OCCUPANCY)", "average since the previous GPM sample", 0.0001},
  {M::kTensorActiveRatio, "tensor_active_ratio", "ratio", "nvmlGpmMetricsGet(ANY_TENSOR_UTIL)", "average since the previous GPM sample", 0.0001},
  {M::kDramBwUtilRatio, "dram_bw_util_ratio", "ratio", "nvmlGpmMetricsGet(DRAM_BW_UTIL)", "average since the previous GPM sample", 0.0001},
  {M::kGpmWindowS, "gpm_window_s", "s", "time between the two GPM samples", "", 0.001},
  {M::kPowerMaxW, "power_max_w", "W", "nvmlDeviceGetSamples(TOTAL_POWER)", "highest 20 ms sample since the previous read", 0.001},
  {M::kUtilizationGpuMaxPct, "utilization_gpu_max_pct", "%", "nvmlDeviceGetSamples(GPU_UTILIZATION)", "highest sample since the previous read", 1},
  {M::kPcieTxBytesPerS, "pcie_tx_bytes_per_s", "bytes/s", "nvmlDeviceGetPcieThroughput(TX)", "20 ms window", 1},
  {M::kPcieRxBytesPerS, "pcie_rx_bytes_per_s", "bytes/s", "nvmlDeviceGetPcieThroughput(RX)", "20 ms window", 1},
  {M::kLost, "lost", "", "GPU_IS_LOST from any call", "instant", 1},
}};
// clang-format on

constexpr bool ids_match_positions() {
  for (std::size_t i = 0; i < kCatalog.size(); ++i)
    if (static_cast<std::size_t>(kCatalog[i].id) != i) return false;
  return true;
}
static_assert(ids_match_positions(), "kCatalog rows must be in MetricId order");

template <typename T>
std::optional<double> as_double(const Reading<T>& r) {
  if (!r.has_value()) return std::nullopt;
  return static_cast<double>(r.value());
}

}  // namespace

std::span<const MetricInfo, kMetricCount> metric_catalog() {
  return kCatalog;
}

const MetricInfo& metric_info(MetricId id) {
  return kCatalog[static_cast<std::size_t>(id)];
}

std::optional<MetricId> metric_by_name(std::string_view name) {
  for (const auto& m : kCatalog)
    if (m.name == name) return m.id;
  return std::nullopt;
}

std::optional<double> metric_value(const DeviceSample& s, MetricId id) {
  switch (id) {
    case M::kUtilizationGpuPct: return as_double(s.utilization_gpu_pct);
    case M::kUtilizationMemoryPct: return as_double(s.utilization_memory_pct);
    case M::kMemoryTotalBytes: return as_double(s.memory_total_bytes);
    case M::kMemoryReservedBytes: return as_double(s.memory_reserved_bytes);
    case M::kMemoryUsedBytes: return as_double(s.memory_used_bytes);
    case M::kMemoryFreeBytes: return as_double(s.memory_free_bytes);
    case M::kTemperatureGpuC: return as_double(s.temperature_gpu_c);
    case M::kTemperatureMemoryC: return as_double(s.temperature_memory_c);
    case M::kPowerDrawW: return as_double(s.power_draw_w);
    case M::kPowerDrawInstantW: return as_double(s.power_draw_instant_w);
    case M::kPowerLimitW: return as_double(s.power_limit_w);
    case M::kEnergyJ: {
      auto mj = as_double(s.energy_mj);
      return mj ? std::optional<double>(*mj / 1000.0) : std::nullopt;
    }
    case M::kSmClockMhz: return as_double(s.sm_clock_mhz);
    case M::kMemClockMhz: return as_double(s.mem_clock_mhz);
    case M::kGraphicsClockMhz: return as_double(s.graphics_clock_mhz);
    case M::kPstate: return as_double(s.pstate);
    case M::kFanSpeedPct: return as_double(s.fan_speed_pct);
    case M::kClockEventReasons: return as_double(s.clock_event_reasons);
    case M::kEccCorrectedVolatile: return as_double(s.ecc_corrected_volatile);
    case M::kEccUncorrectedVolatile: return as_double(s.ecc_uncorrected_volatile);
    case M::kSmActiveRatio: return as_double(s.sm_active_ratio);
    case M::kSmOccupancyRatio: return as_double(s.sm_occupancy_ratio);
    case M::kTensorActiveRatio: return as_double(s.tensor_active_ratio);
    case M::kDramBwUtilRatio: return as_double(s.dram_bw_util_ratio);
    case M::kGpmWindowS: return as_double(s.gpm_window_s);
    case M::kPowerMaxW: return as_double(s.power_max_w);
    case M::kUtilizationGpuMaxPct: return as_double(s.utilization_gpu_max_pct);
    case M::kPcieTxBytesPerS: return as_double(s.pcie_tx_bytes_per_s);
    case M::kPcieRxBytesPerS: return as_double(s.pcie_rx_bytes_per_s);
    case M::kLost: return s.lost ? 1.0 : 0.0;
  }
  return std::nullopt;
}

}  // namespace gpumon
