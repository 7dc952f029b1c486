// SPDX-License-Identifier: MIT
#include "gpu/metric_catalog.h"

#include <cmath>
#include <type_traits>
#include <utility>

namespace gpumon {
namespace {

using M = MetricId;
using G = MetricGroup;
using S = DeviceSample;
// No sample() group: GPM, driver buffers and PCIe are read by the sampler's own tasks, `lost`
// comes from any call.
constexpr std::optional<MetricGroup> kNoGroup;
// clang-format off
constexpr std::array<MetricInfo, kMetricCount> kCatalog{{
  {M::kUtilizationGpuPct, "utilization_gpu_pct", "%", "nvmlDeviceGetUtilizationRates", "% of time a kernel ran over the driver's last 1/6-1 s", 1, &S::utilization_gpu_pct, G::kUtilization},
  {M::kUtilizationMemoryPct, "utilization_memory_pct", "%", "nvmlDeviceGetUtilizationRates", "% of time memory was read or written over the last 1/6-1 s", 1, &S::utilization_memory_pct, G::kUtilization},
  {M::kMemoryTotalBytes, "memory_total_bytes", "bytes", "nvmlDeviceGetMemoryInfo_v2", "instant", 1, &S::memory_total_bytes, G::kMemory},
  {M::kMemoryReservedBytes, "memory_reserved_bytes", "bytes", "nvmlDeviceGetMemoryInfo_v2", "instant", 1, &S::memory_reserved_bytes, G::kMemory},
  {M::kMemoryUsedBytes, "memory_used_bytes", "bytes", "nvmlDeviceGetMemoryInfo_v2", "instant", 1, &S::memory_used_bytes, G::kMemory},
  {M::kMemoryFreeBytes, "memory_free_bytes", "bytes", "nvmlDeviceGetMemoryInfo_v2", "instant", 1, &S::memory_free_bytes, G::kMemory},
  {M::kTemperatureGpuC, "temperature_gpu_c", "°C", "nvmlDeviceGetTemperature", "instant", 1, &S::temperature_gpu_c, G::kTemperature},
  {M::kTemperatureMemoryC, "temperature_memory_c", "°C", "nvmlDeviceGetFieldValues(MEMORY_TEMP)", "instant", 1, &S::temperature_memory_c, G::kMemoryTemperature},
  {M::kPowerDrawW, "power_draw_w", "W", "nvmlDeviceGetPowerUsage", "1 s average on Ampere and newer", 0.001, &S::power_draw_w, G::kPower},
  {M::kPowerDrawInstantW, "power_draw_instant_w", "W", "nvmlDeviceGetFieldValues(POWER_INSTANT)", "instant", 0.001, &S::power_draw_instant_w, G::kPowerInstant},
  {M::kPowerLimitW, "power_limit_w", "W", "nvmlDeviceGetEnforcedPowerLimit", "instant", 0.001, &S::power_limit_w, G::kPowerLimit},
  {M::kEnergyJ, "energy_j", "J", "nvmlDeviceGetTotalEnergyConsumption", "since the driver loaded", 0.001, &S::energy_mj, G::kEnergy, 1000},
  {M::kSmClockMhz, "sm_clock_mhz", "MHz", "nvmlDeviceGetClockInfo(SM)", "instant", 1, &S::sm_clock_mhz, G::kSmClock},
  {M::kMemClockMhz, "mem_clock_mhz", "MHz", "nvmlDeviceGetClockInfo(MEM)", "instant", 1, &S::mem_clock_mhz, G::kMemClock},
  {M::kGraphicsClockMhz, "graphics_clock_mhz", "MHz", "nvmlDeviceGetClockInfo(GRAPHICS)", "instant", 1, &S::graphics_clock_mhz, G::kGraphicsClock},
  {M::kPstate, "pstate", "", "nvmlDeviceGetPerformanceState", "instant", 1, &S::pstate, G::kPstate},
  {M::kFanSpeedPct, "fan_speed_pct", "%", "nvmlDeviceGetFanSpeed", "instant", 1, &S::fan_speed_pct, G::kFan},
  {M::kClockEventReasons, "clock_event_reasons", "bitmask", "nvmlDeviceGetCurrentClocksEventReasons", "instant", 1, &S::clock_event_reasons, G::kClockEvents},
  {M::kEccCorrectedVolatile, "ecc_corrected_volatile", "count", "nvmlDeviceGetTotalEccErrors", "since the driver loaded", 1, &S::ecc_corrected_volatile, G::kEcc},
  {M::kEccUncorrectedVolatile, "ecc_uncorrected_volatile", "count", "nvmlDeviceGetTotalEccErrors", "since the driver loaded", 1, &S::ecc_uncorrected_volatile, G::kEcc},
  {M::kSmActiveRatio, "sm_active_ratio", "ratio", "nvmlGpmMetricsGet(SM_UTIL)", "average since the previous GPM sample", 0.0001, &S::sm_active_ratio, kNoGroup},
  {M::kSmOccupancyRatio, "sm_occupancy_ratio", "ratio", "nvmlGpmMetricsGet(SM_OCCUPANCY)", "average since the previous GPM sample", 0.0001, &S::sm_occupancy_ratio, kNoGroup},
  {M::kTensorActiveRatio, "tensor_active_ratio", "ratio", "nvmlGpmMetricsGet(ANY_TENSOR_UTIL)", "average since the previous GPM sample", 0.0001, &S::tensor_active_ratio, kNoGroup},
  {M::kDramBwUtilRatio, "dram_bw_util_ratio", "ratio", "nvmlGpmMetricsGet(DRAM_BW_UTIL)", "average since the previous GPM sample", 0.0001, &S::dram_bw_util_ratio, kNoGroup},
  {M::kGpmWindowS, "gpm_window_s", "s", "time between the two GPM samples", "", 0.001, &S::gpm_window_s, kNoGroup},
  {M::kPowerMaxW, "power_max_w", "W", "nvmlDeviceGetSamples(TOTAL_POWER)", "highest 20 ms sample since the previous read", 0.001, &S::power_max_w, kNoGroup},
  {M::kUtilizationGpuMaxPct, "utilization_gpu_max_pct", "%", "nvmlDeviceGetSamples(GPU_UTILIZATION)", "highest sample since the previous read", 1, &S::utilization_gpu_max_pct, kNoGroup},
  {M::kPcieTxBytesPerS, "pcie_tx_bytes_per_s", "bytes/s", "nvmlDeviceGetPcieThroughput(TX)", "20 ms window", 1, &S::pcie_tx_bytes_per_s, kNoGroup},
  {M::kPcieRxBytesPerS, "pcie_rx_bytes_per_s", "bytes/s", "nvmlDeviceGetPcieThroughput(RX)", "20 ms window", 1, &S::pcie_rx_bytes_per_s, kNoGroup},
  {M::kLost, "lost", "", "GPU_IS_LOST from any call", "instant", 1, &S::lost, kNoGroup},
  {M::kPcieLinkGen, "pcie_link_gen", "", "nvmlDeviceGetCurrPcieLinkGeneration", "instant", 1, &S::pcie_link_gen, G::kPcieLinkGen},
  {M::kPcieLinkWidth, "pcie_link_width", "lanes", "nvmlDeviceGetCurrPcieLinkWidth", "instant", 1, &S::pcie_link_width, G::kPcieLinkWidth},
  {M::kUtilizationEncoderPct, "utilization_encoder_pct", "%", "nvmlDeviceGetEncoderUtilization", "% of the driver's last 1/6-1 s period the encoder ran", 1, &S::utilization_encoder_pct, G::kEncoderUtil},
  {M::kUtilizationDecoderPct, "utilization_decoder_pct", "%", "nvmlDeviceGetDecoderUtilization", "% of the driver's last 1/6-1 s period the decoder ran", 1, &S::utilization_decoder_pct, G::kDecoderUtil},
  {M::kPowerDrawAverageW, "power_draw_average_w", "W", "nvmlDeviceGetFieldValues(POWER_AVERAGE)", "1 s average", 0.001, &S::power_draw_average_w, G::kPowerAverage},
  {M::kPcieReplayCount, "pcie_replay_count", "count", "nvmlDeviceGetPcieReplayCounter", "since the driver loaded", 1, &S::pcie_replay_count, G::kPcieReplay},
  {M::kRemappedRowsCorrectable, "remapped_rows_correctable", "count", "nvmlDeviceGetFieldValues(REMAPPED_COR)", "since the GPU was made", 1, &S::remapped_rows_correctable, G::kRemappedRows},
  {M::kRemappedRowsUncorrectable, "remapped_rows_uncorrectable", "count", "nvmlDeviceGetFieldValues(REMAPPED_UNC)", "since the GPU was made", 1, &S::remapped_rows_uncorrectable, G::kRemappedRows},
  {M::kRemappedRowsPending, "remapped_rows_pending", "", "nvmlDeviceGetFieldValues(REMAPPED_PENDING)", "instant", 1, &S::remapped_rows_pending, G::kRemappedRows},
  {M::kRemappedRowsFailure, "remapped_rows_failure", "", "nvmlDeviceGetFieldValues(REMAPPED_FAILURE)", "instant", 1, &S::remapped_rows_failure, G::kRemappedRows},
  {M::kNvlinkDataTxKib, "nvlink_data_tx_kib", "KiB", "nvmlDeviceGetFieldValues(NVLINK_THROUGHPUT_DATA_TX, all links)", "since the driver loaded", 1, &S::nvlink_data_tx_kib, G::kNvlinkThroughput},
  {M::kNvlinkDataRxKib, "nvlink_data_rx_kib", "KiB", "nvmlDeviceGetFieldValues(NVLINK_THROUGHPUT_DATA_RX, all links)", "since the driver loaded", 1, &S::nvlink_data_rx_kib, G::kNvlinkThroughput},
  {M::kUtilizationJpegPct, "utilization_jpeg_pct", "%", "nvmlDeviceGetJpgUtilization", "% of the driver's last 1/6-1 s period the JPEG decoder ran", 1, &S::utilization_jpeg_pct, G::kJpegUtil},
  {M::kUtilizationOfaPct, "utilization_ofa_pct", "%", "nvmlDeviceGetOfaUtilization", "% of the driver's last 1/6-1 s period the optical-flow accelerator ran", 1, &S::utilization_ofa_pct, G::kOfaUtil},
  {M::kClockEventSwPowerCapS, "clock_event_sw_power_cap_s", "s", "nvmlDeviceGetFieldValues(PERF_POLICY_POWER)", "since the driver loaded", 1e-9, &S::clock_event_sw_power_cap_ns, G::kPerfPolicyTime, 1e9},
  {M::kClockEventSyncBoostS, "clock_event_sync_boost_s", "s", "nvmlDeviceGetFieldValues(PERF_POLICY_SYNC_BOOST)", "since the driver loaded", 1e-9, &S::clock_event_sync_boost_ns, G::kPerfPolicyTime, 1e9},
  {M::kClockEventSwThermalS, "clock_event_sw_thermal_s", "s", "nvmlDeviceGetFieldValues(CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN)", "since the driver loaded", 1e-9, &S::clock_event_sw_thermal_ns, G::kSlowdownTime, 1e9},
  {M::kClockEventHwThermalS, "clock_event_hw_thermal_s", "s", "nvmlDeviceGetFieldValues(CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN)", "since the driver loaded", 1e-9, &S::clock_event_hw_thermal_ns, G::kSlowdownTime, 1e9},
  {M::kClockEventHwPowerBrakeS, "clock_event_hw_power_brake_s", "s", "nvmlDeviceGetFieldValues(CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN)", "since the driver loaded", 1e-9, &S::clock_event_hw_power_brake_ns, G::kSlowdownTime, 1e9},
  {M::kTemperatureMarginC, "temperature_margin_c", "°C", "nvmlDeviceGetMarginTemperature", "instant", 1, &S::temperature_margin_c, G::kTemperatureMargin},
  {M::kBar1TotalBytes, "bar1_total_bytes", "bytes", "nvmlDeviceGetBAR1MemoryInfo", "instant", 1, &S::bar1_total_bytes, G::kBar1Memory},
  {M::kBar1UsedBytes, "bar1_used_bytes", "bytes", "nvmlDeviceGetBAR1MemoryInfo", "instant", 1, &S::bar1_used_bytes, G::kBar1Memory},
  {M::kGrEngineActiveRatio, "gr_engine_active_ratio", "ratio", "nvmlGpmMetricsGet(GRAPHICS_UTIL)", "average since the previous GPM sample", 0.0001, &S::gr_engine_active_ratio, kNoGroup},
}};
// clang-format on

constexpr bool ids_match_positions() {
  for (std::size_t i = 0; i < kCatalog.size(); ++i)
    if (static_cast<std::size_t>(kCatalog[i].id) != i) return false;
  return true;
}
static_assert(ids_match_positions(), "kCatalog rows must be in MetricId order");

// Calls f(field) with the member pointer of metric `id`.
template <typename F>
decltype(auto) with_field(MetricId id, F&& f) {
  return std::visit(std::forward<F>(f), kCatalog[static_cast<std::size_t>(id)].field);
}

template <typename T>
constexpr bool kIsFlag = std::is_same_v<T, bool DeviceSample::*>;

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
  const double per_unit = metric_info(id).field_per_unit;
  return with_field(id, [&](auto field) -> std::optional<double> {
    const auto& v = s.*field;
    if constexpr (kIsFlag<decltype(field)>) {
      return v ? 1.0 : 0.0;
    } else {
      if (!v.has_value()) return std::nullopt;
      const auto x = static_cast<double>(v.value());
      return per_unit == 1 ? x : x / per_unit;
    }
  });
}

std::optional<Missing> metric_missing(const DeviceSample& s, MetricId id) {
  return with_field(id, [&](auto field) -> std::optional<Missing> {
    if constexpr (kIsFlag<decltype(field)>) {
      return std::nullopt;
    } else {
      const auto& r = s.*field;
      return r.has_value() ? std::nullopt : std::optional<Missing>(r.why());
    }
  });
}

void set_metric_value(DeviceSample& s, MetricId id, double value) {
  const double stored = value * metric_info(id).field_per_unit;
  with_field(id, [&](auto field) {
    auto& out = s.*field;
    if constexpr (kIsFlag<decltype(field)>) {
      out = stored != 0;
    } else {
      using T = std::remove_cvref_t<decltype(out.value())>;
      if constexpr (std::is_integral_v<T>) {
        out = static_cast<T>(std::llround(stored));
      } else {
        out = static_cast<T>(stored);
      }
    }
  });
}

void set_metric_missing(DeviceSample& s, MetricId id, Missing why) {
  with_field(id, [&](auto field) {
    auto& out = s.*field;
    if constexpr (!kIsFlag<decltype(field)>) out = std::remove_cvref_t<decltype(out)>::missing(why);
  });
}

void copy_metric(DeviceSample& into, const DeviceSample& from, MetricId id) {
  with_field(id, [&](auto field) { into.*field = from.*field; });
}

void set_all_missing(DeviceSample& s, Missing why) {
  for (const MetricInfo& m : kCatalog) set_metric_missing(s, m.id, why);
}

void mark_lost(DeviceSample& s) {
  s.lost = true;
  set_all_missing(s, Missing::kGpuLost);
}

}  // namespace gpumon
