// SPDX-License-Identifier: MIT
// The catalog of per-GPU metrics: one row per metric with its stable name, unit, source,
// storage quantum, and where it lives in DeviceSample (field, unit conversion, the group that
// reads it). Recordings, exports and the exporter name metrics from here, and code that treats
// every metric alike (merge, lost, error counts, values) loops over it, so adding a metric is a
// DeviceSample field, a row here and its NVML read. Ids are stored in recordings: append only,
// never renumber.
//
// Thread-safety: the catalog is immutable; the sample functions touch only their arguments.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <variant>

#include "gpu/gpu_types.h"
#include "gpu/metric_group.h"

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
  kPcieLinkGen = 30,
  kPcieLinkWidth = 31,
  kUtilizationEncoderPct = 32,
  kUtilizationDecoderPct = 33,
  kPowerDrawAverageW = 34,
  kPcieReplayCount = 35,
  kRemappedRowsCorrectable = 36,
  kRemappedRowsUncorrectable = 37,
  kRemappedRowsPending = 38,
  kRemappedRowsFailure = 39,
  kNvlinkDataTxKib = 40,
  kNvlinkDataRxKib = 41,
  kUtilizationJpegPct = 42,
  kUtilizationOfaPct = 43,
  kClockEventSwPowerCapS = 44,
  kClockEventSyncBoostS = 45,
  kClockEventSwThermalS = 46,
  kClockEventHwThermalS = 47,
  kClockEventHwPowerBrakeS = 48,
  kTemperatureMarginC = 49,  ///< degrees below the T.Limit; negative above it
  kBar1TotalBytes = 50,
  kBar1UsedBytes = 51,
  kGrEngineActiveRatio = 52,  ///< GPM GRAPHICS_UTIL: what DCGM calls PROF_GR_ENGINE_ACTIVE
};
inline constexpr std::size_t kMetricCount = 53;

/// The DeviceSample member a metric lives in. A Reading is missing with a reason (Missing); the
/// `lost` flag is never missing (0 or 1) and is not a reading of its own.
using SampleField =
    std::variant<Reading<unsigned> DeviceSample::*, Reading<std::uint64_t> DeviceSample::*,
                 Reading<double> DeviceSample::*, Reading<int> DeviceSample::*,
                 bool DeviceSample::*>;

struct MetricInfo {
  MetricId id;
  std::string_view name;    ///< snake_case with the unit: "power_draw_w"
  std::string_view unit;    ///< "W", "%", "bytes", "°C", "MHz", "ratio", "J", "count", ""
  std::string_view source;  ///< the NVML call or computation
  std::string_view window;  ///< what time the value covers
  /// Values are stored as integers in units of `quantum` (0.001 W = 1 mW); lossless for NVML.
  double quantum;
  SampleField field;
  /// The GpuBackend::sample() group that reads it; nullopt for what the sampler's own tasks
  /// fill (GPM, the driver's sample buffers, PCIe) and for `lost`.
  std::optional<MetricGroup> group;
  /// The field holds the value in `unit` times this (energy: mJ in the field, J in `unit`).
  double field_per_unit = 1;
};

/// A clock-event time counter and the reason bit whose time it counts.
struct ClockEventTimer {
  MetricId metric;
  std::uint64_t reason;  ///< a ClockEventReason bit
};
inline constexpr std::array<ClockEventTimer, 5> kClockEventTimers{{
    {MetricId::kClockEventSwPowerCapS, kClockEventSwPowerCap},
    {MetricId::kClockEventSyncBoostS, kClockEventSyncBoost},
    {MetricId::kClockEventSwThermalS, kClockEventSwThermalSlowdown},
    {MetricId::kClockEventHwThermalS, kClockEventHwThermalSlowdown},
    {MetricId::kClockEventHwPowerBrakeS, kClockEventHwPowerBrakeSlowdown},
}};

/// Every metric, indexed by its id.
std::span<const MetricInfo, kMetricCount> metric_catalog();
const MetricInfo& metric_info(MetricId id);
std::optional<MetricId> metric_by_name(std::string_view name);

/// The value of metric `id` in `s`, in the catalog's unit; nullopt when missing.
std::optional<double> metric_value(const DeviceSample& s, MetricId id);
/// Why metric `id` is missing in `s`; nullopt when it has a value (`lost` always has one).
std::optional<Missing> metric_missing(const DeviceSample& s, MetricId id);
/// Sets metric `id` in `s` from `value` in the catalog's unit, converted to the field's type
/// (integers are rounded; `lost` is set when value != 0).
void set_metric_value(DeviceSample& s, MetricId id, double value);
/// Marks metric `id` missing for `why`; `lost`, never missing, is left as it is.
void set_metric_missing(DeviceSample& s, MetricId id, Missing why);
/// Copies metric `id` (value or missing reason) from `from` into `into`.
void copy_metric(DeviceSample& into, const DeviceSample& from, MetricId id);

/// Marks every metric of `s` missing for `why` (`lost` left as it is).
void set_all_missing(DeviceSample& s, Missing why);
/// What a backend returns for a lost GPU: `lost` set and every other metric kGpuLost.
void mark_lost(DeviceSample& s);

}  // namespace gpumon
