// SPDX-License-Identifier: MIT
#include "exporter/metric_names.h"

#include <utility>
#include <vector>

#include "gpu/gpu_types.h"

namespace gpumon::exporter {
namespace {

using M = MetricId;
constexpr auto kGauge = MetricType::kGauge;
constexpr auto kCounter = MetricType::kCounter;
constexpr double kPct = 0.01;
constexpr double kMhz = 1e6;
constexpr double kMib = 1.0 / (1024.0 * 1024.0);

// The HELP text: what it is, then where the value comes from and what time it covers, from the
// catalog, so a user reading /metrics knows a GPM ratio is an average and a max is a peak.
std::vector<FamilySpec> with_help(std::vector<FamilySpec> specs) {
  for (FamilySpec& f : specs) {
    const MetricInfo& m = metric_info(f.id);
    f.help = std::string(f.what) + " (from " + std::string(m.source);
    if (!m.window.empty()) f.help += "; " + std::string(m.window);
    f.help += "; newest sample)";
  }
  return specs;
}

// clang-format off
const std::vector<FamilySpec>& native_table() {
  static const std::vector<FamilySpec> table = with_help({
    {M::kUtilizationGpuPct, "gpumon_gpu_utilization_ratio", kGauge, kPct, "Fraction of time a kernel ran, 0-1", {}},
    {M::kUtilizationMemoryPct, "gpumon_gpu_memory_utilization_ratio", kGauge, kPct, "Fraction of time device memory was read or written, 0-1", {}},
    {M::kUtilizationGpuMaxPct, "gpumon_gpu_utilization_max_ratio", kGauge, kPct, "Highest utilization sample of the driver buffer since the previous read, 0-1", {}},
    {M::kSmActiveRatio, "gpumon_gpu_sm_active_ratio", kGauge, 1, "Fraction of SMs active (GPM), 0-1", {}},
    {M::kSmOccupancyRatio, "gpumon_gpu_sm_occupancy_ratio", kGauge, 1, "SM warp occupancy (GPM), 0-1", {}},
    {M::kTensorActiveRatio, "gpumon_gpu_tensor_active_ratio", kGauge, 1, "Fraction of time tensor cores were active (GPM), 0-1", {}},
    {M::kDramBwUtilRatio, "gpumon_gpu_dram_bandwidth_utilization_ratio", kGauge, 1, "DRAM bandwidth used, fraction of peak (GPM), 0-1", {}},
    {M::kGrEngineActiveRatio, "gpumon_gpu_graphics_engine_active_ratio", kGauge, 1, "Fraction of time any compute or graphics work ran on the GPU (GPM), 0-1", {}},
    {M::kMemoryTotalBytes, "gpumon_gpu_memory_total_bytes", kGauge, 1, "Device memory total, bytes", {}},
    {M::kMemoryUsedBytes, "gpumon_gpu_memory_used_bytes", kGauge, 1, "Device memory used, bytes", {}},
    {M::kMemoryFreeBytes, "gpumon_gpu_memory_free_bytes", kGauge, 1, "Device memory free, bytes", {}},
    {M::kMemoryReservedBytes, "gpumon_gpu_memory_reserved_bytes", kGauge, 1, "Device memory reserved by the driver and firmware, bytes", {}},
    {M::kTemperatureGpuC, "gpumon_gpu_temperature_celsius", kGauge, 1, "GPU die temperature, degrees Celsius", {}},
    {M::kTemperatureMemoryC, "gpumon_gpu_memory_temperature_celsius", kGauge, 1, "Memory (HBM) temperature, degrees Celsius", {}},
    {M::kTemperatureMarginC, "gpumon_gpu_temperature_margin_celsius", kGauge, 1, "Degrees below the GPU's T.Limit, where it starts to slow down; negative above it", {}},
    {M::kBar1UsedBytes, "gpumon_gpu_bar1_used_bytes", kGauge, 1, "PCIe BAR1 aperture in use (host and peer mappings of device memory), bytes", {}},
    {M::kBar1TotalBytes, "gpumon_gpu_bar1_total_bytes", kGauge, 1, "PCIe BAR1 aperture size, bytes", {}},
    {M::kPowerDrawW, "gpumon_gpu_power_watts", kGauge, 1, "Power draw, watts", {}},
    {M::kPowerDrawInstantW, "gpumon_gpu_power_instant_watts", kGauge, 1, "Instantaneous power draw, watts", {}},
    {M::kPowerMaxW, "gpumon_gpu_power_max_watts", kGauge, 1, "Highest power sample of the driver buffer since the previous read, watts", {}},
    {M::kPowerLimitW, "gpumon_gpu_power_limit_watts", kGauge, 1, "Enforced power limit, watts", {}},
    {M::kEnergyJ, "gpumon_gpu_energy_joules_total", kCounter, 1, "Energy consumed, joules", {}},
    {M::kSmClockMhz, "gpumon_gpu_sm_clock_hertz", kGauge, kMhz, "SM clock, hertz", {}},
    {M::kMemClockMhz, "gpumon_gpu_memory_clock_hertz", kGauge, kMhz, "Memory clock, hertz", {}},
    {M::kGraphicsClockMhz, "gpumon_gpu_graphics_clock_hertz", kGauge, kMhz, "Graphics clock, hertz", {}},
    {M::kPstate, "gpumon_gpu_pstate", kGauge, 1, "Performance state, 0 (highest) to 15", {}},
    {M::kFanSpeedPct, "gpumon_gpu_fan_speed_ratio", kGauge, kPct, "Fan speed, fraction of maximum, 0-1", {}},
    {M::kEccCorrectedVolatile, "gpumon_gpu_ecc_corrected_errors_total", kCounter, 1, "Corrected (single-bit) ECC errors", {}},
    {M::kEccUncorrectedVolatile, "gpumon_gpu_ecc_uncorrected_errors_total", kCounter, 1, "Uncorrected (double-bit) ECC errors", {}},
    {M::kPcieTxBytesPerS, "gpumon_gpu_pcie_tx_bytes_per_second", kGauge, 1, "PCIe transmit throughput, bytes per second", {}},
    {M::kPcieRxBytesPerS, "gpumon_gpu_pcie_rx_bytes_per_second", kGauge, 1, "PCIe receive throughput, bytes per second", {}},
    {M::kPcieLinkGen, "gpumon_gpu_pcie_link_generation", kGauge, 1, "Current PCIe link generation (lower at idle)", {}},
    {M::kPcieLinkWidth, "gpumon_gpu_pcie_link_width_lanes", kGauge, 1, "Current PCIe link width, lanes", {}},
    {M::kUtilizationEncoderPct, "gpumon_gpu_encoder_utilization_ratio", kGauge, kPct, "Fraction of time the video encoder ran, 0-1", {}},
    {M::kUtilizationDecoderPct, "gpumon_gpu_decoder_utilization_ratio", kGauge, kPct, "Fraction of time the video decoder ran, 0-1", {}},
    {M::kPowerDrawAverageW, "gpumon_gpu_power_average_watts", kGauge, 1, "Power draw averaged by the driver over 1 s, watts", {}},
    {M::kPcieReplayCount, "gpumon_gpu_pcie_replays_total", kCounter, 1, "PCIe replays (link-level retries after transmission errors)", {}},
    {M::kRemappedRowsCorrectable, "gpumon_gpu_remapped_rows_correctable_total", kCounter, 1, "Memory rows remapped for correctable errors", {}},
    {M::kRemappedRowsUncorrectable, "gpumon_gpu_remapped_rows_uncorrectable_total", kCounter, 1, "Memory rows remapped for uncorrectable errors", {}},
    {M::kRemappedRowsPending, "gpumon_gpu_row_remap_pending", kGauge, 1, "1 while a row remap waits for the next GPU reset, else 0", {}},
    {M::kRemappedRowsFailure, "gpumon_gpu_row_remap_failed", kGauge, 1, "1 once a row remap failed (the GPU needs service), else 0", {}},
    {M::kNvlinkDataTxKib, "gpumon_gpu_nvlink_tx_bytes_total", kCounter, 1024, "NVLink payload sent over all links, bytes", {}},
    {M::kNvlinkDataRxKib, "gpumon_gpu_nvlink_rx_bytes_total", kCounter, 1024, "NVLink payload received over all links, bytes", {}},
    {M::kUtilizationJpegPct, "gpumon_gpu_jpeg_utilization_ratio", kGauge, kPct, "Fraction of time the JPEG decoder ran, 0-1", {}},
    {M::kUtilizationOfaPct, "gpumon_gpu_ofa_utilization_ratio", kGauge, kPct, "Fraction of time the optical-flow accelerator ran, 0-1", {}},
    {M::kLost, "gpumon_gpu_lost", kGauge, 1, "1 while the GPU is lost (fell off the bus), else 0", {}},
  });
  return table;
}

// dcgm-exporter's names, units and types (its etc/default-counters.csv): its counters are
// counters without `_total`, which `promtool check metrics` remarks on (docs/exporter.md).
// DCGM's framebuffer fields are whole MiB.
const std::vector<FamilySpec>& dcgm_table() {
  static const std::vector<FamilySpec> table = with_help({
    {M::kUtilizationGpuPct, "DCGM_FI_DEV_GPU_UTIL", kGauge, 1, "GPU utilization, %", {}},
    {M::kUtilizationMemoryPct, "DCGM_FI_DEV_MEM_COPY_UTIL", kGauge, 1, "Memory utilization, %", {}},
    {M::kUtilizationEncoderPct, "DCGM_FI_DEV_ENC_UTIL", kGauge, 1, "Encoder utilization, %", {}},
    {M::kUtilizationDecoderPct, "DCGM_FI_DEV_DEC_UTIL", kGauge, 1, "Decoder utilization, %", {}},
    {M::kMemoryUsedBytes, "DCGM_FI_DEV_FB_USED", kGauge, kMib, "Framebuffer memory used, MiB", {}, true},
    {M::kMemoryFreeBytes, "DCGM_FI_DEV_FB_FREE", kGauge, kMib, "Framebuffer memory free, MiB", {}, true},
    {M::kMemoryReservedBytes, "DCGM_FI_DEV_FB_RESERVED", kGauge, kMib, "Framebuffer memory reserved, MiB", {}, true},
    {M::kTemperatureGpuC, "DCGM_FI_DEV_GPU_TEMP", kGauge, 1, "GPU temperature, C", {}},
    {M::kTemperatureMemoryC, "DCGM_FI_DEV_MEMORY_TEMP", kGauge, 1, "Memory temperature, C", {}},
    {M::kPowerDrawW, "DCGM_FI_DEV_POWER_USAGE", kGauge, 1, "Power draw, W", {}},
    {M::kEnergyJ, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", kCounter, 1000, "Total energy consumption since the driver loaded, mJ", {}},
    {M::kSmClockMhz, "DCGM_FI_DEV_SM_CLOCK", kGauge, 1, "SM clock frequency, MHz", {}},
    {M::kMemClockMhz, "DCGM_FI_DEV_MEM_CLOCK", kGauge, 1, "Memory clock frequency, MHz", {}},
    {M::kPcieReplayCount, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", kCounter, 1, "Total number of PCIe retries", {}},
    {M::kEccCorrectedVolatile, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", kCounter, 1, "Total single-bit volatile ECC errors", {}},
    {M::kEccUncorrectedVolatile, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", kCounter, 1, "Total double-bit volatile ECC errors", {}},
    {M::kRemappedRowsCorrectable, "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", kCounter, 1, "Number of remapped rows for correctable errors", {}},
    {M::kRemappedRowsUncorrectable, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", kCounter, 1, "Number of remapped rows for uncorrectable errors", {}},
    {M::kRemappedRowsPending, "DCGM_FI_DEV_ROW_REMAP_PENDING", kGauge, 1, "Whether remapping of rows waits for a GPU reset", {}},
    {M::kRemappedRowsFailure, "DCGM_FI_DEV_ROW_REMAP_FAILURE", kGauge, 1, "Whether remapping of rows has failed", {}},
    // DCGM's violation fields are NVML's perf-policy counters in ns (dcgm_fields.h; older
    // dcgm-exporter comments said us).
    {M::kClockEventSwPowerCapS, "DCGM_FI_DEV_POWER_VIOLATION", kCounter, 1e9, "Throttling duration due to power constraints, ns", {}, true},
    {M::kClockEventSyncBoostS, "DCGM_FI_DEV_SYNC_BOOST_VIOLATION", kCounter, 1e9, "Throttling duration due to sync-boost constraints, ns", {}, true},
    // GPM's GRAPHICS_UTIL, the counter DCGM reads; absent without GPM (before Hopper), where
    // DCGM's own profiling has it and NVML does not.
    {M::kGrEngineActiveRatio, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", kGauge, 1, "Ratio of time the graphics engine is active", {}},
    {M::kSmActiveRatio, "DCGM_FI_PROF_SM_ACTIVE", kGauge, 1, "Ratio of cycles an SM has at least 1 warp assigned", {}},
    {M::kSmOccupancyRatio, "DCGM_FI_PROF_SM_OCCUPANCY", kGauge, 1, "Ratio of warps resident to the maximum supported", {}},
    {M::kTensorActiveRatio, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", kGauge, 1, "Ratio of cycles the tensor pipe is active", {}},
    {M::kDramBwUtilRatio, "DCGM_FI_PROF_DRAM_ACTIVE", kGauge, 1, "Ratio of cycles the device memory interface is active", {}},
    // NVML's PCIe throughput (payload, a 20 ms window) where DCGM's profiling counts headers too.
    {M::kPcieTxBytesPerS, "DCGM_FI_PROF_PCIE_TX_BYTES", kGauge, 1, "Rate of data transmitted over PCIe, bytes per second", {}},
    {M::kPcieRxBytesPerS, "DCGM_FI_PROF_PCIE_RX_BYTES", kGauge, 1, "Rate of data received over PCIe, bytes per second", {}},
  });
  return table;
}
// clang-format on

}  // namespace

std::span<const FamilySpec> native_families() {
  return native_table();
}

std::span<const FamilySpec> dcgm_families() {
  return dcgm_table();
}

double scaled(const FamilySpec& f, double value) {
  if (f.scale < 1) {
    const double v = value / std::round(1 / f.scale);
    return f.whole ? std::floor(v) : v;
  }
  // Back to the driver's integer unit (s -> ns): rounded, as the product may miss it by a bit.
  const double v = value * f.scale;
  return f.whole ? std::round(v) : v;
}

const FamilySpec* find_family(std::span<const FamilySpec> families, MetricId id) {
  for (const FamilySpec& f : families)
    if (f.id == id) return &f;
  return nullptr;
}

std::span<const std::pair<std::uint64_t, std::string>> clock_event_reasons() {
  static const std::vector<std::pair<std::uint64_t, std::string>> reasons = [] {
    std::vector<std::pair<std::uint64_t, std::string>> out;
    for (std::uint64_t bit = 1; bit <= kClockEventDisplayClockSetting; bit <<= 1) {
      const auto names = clock_event_reason_names(bit);
      if (names.size() == 1) out.emplace_back(bit, names[0]);
    }
    return out;
  }();
  return reasons;
}

}  // namespace gpumon::exporter
