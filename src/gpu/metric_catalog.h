// SPDX-License-Identifier: MIT
// The catalog of per-GPU metrics: one row per metric with its stable name, unit, source and
// storage quantum. Recordings, exports and the exporter name metrics from here, so a metric's
// name and unit are written once. Ids are stored in recordings: append only, never renumber.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "gpu/gpu_types.h"

namespace gpumon {

enum class MetricId : std::uint16_t {
  kUtilizationGpuPct = 0,
  kUtilizationMemoryPct = 1,
  kMemoryTotalBytes = 2,
  kMemoryReservedBytes = 3,
  kMemoryUsedBytes = 4,
  kMemoryFreeBytes = 5,
  kTemperatureGpuC = 6,
  kTemperatureMemoryC = 7,
  kPowerDrawW = 8,
  kPowerDrawInstantW = 9,
  kPowerLimitW = 10,
  kEnergyJ = 11,
  kSmClockMhz = 12,
  kMemClockMhz = 13,
  kGraphicsClockMhz = 14,
  kPstate = 15,
  kFanSpeedPct = 16,
  kClockEventReasons = 17,
  kEccCorrectedVolatile = 18,
  kEccUncorrectedVolatile = 19,
  kSmActiveRatio = 20,
  kSmOccupancyRatio = 21,
  kTensorActiveRatio = 22,
  kDramBwUtilRatio = 23,
  kGpmWindowS = 24,
  kPowerMaxW = 25,
  kUtilizationGpuMaxPct = 26,
  kPcieTxBytesPerS = 27,
  kPcieRxBytesPerS = 28,
  kLost = 29,  ///< 1 while the GPU is lost, else 0
};
inline constexpr std::size_t kMetricCount = 30;

struct MetricInfo {
  MetricId id;
  std::string_view name;    ///< snake_case with the unit: "power_draw_w"
  std::string_view unit;    ///< "W", "%", "bytes", "C", "MHz", "ratio", "J", "count", ""
  std::string_view source;  ///< the NVML call or computation
  std::string_view window;  ///< what time the value covers
  /// Values are stored as integers in units of `quantum` (0.001 W = 1 mW); lossless for NVML.
  double quantum;
};

/// Every metric, indexed by its id.
std::span<const MetricInfo, kMetricCount> metric_catalog();
const MetricInfo& metric_info(MetricId id);
std::optional<MetricId> metric_by_name(std::string_view name);

/// The value of metric `id` in `s`, in the catalog's unit; nullopt when missing.
std::optional<double> metric_value(const DeviceSample& s, MetricId id);

}  // namespace gpumon
