// SPDX-License-Identifier: MIT
// What the reads beyond the cheap sample return: GPM, the driver's sample buffers, per-process
// utilization and PCIe throughput. Plain data; units in the names. Each read costs between
// 0.3 and 20 ms on an H200 (DESIGN.md), so the sampler schedules them apart from sample().
#pragma once

#include <cstdint>
#include <vector>

#include "gpu/reading.h"

namespace gpumon {

/// GPM (Hopper and newer): averages over the window between two GPM samples, as ratios 0-1.
struct GpmReading {
  Reading<double> sm_active_ratio;      ///< share of SMs busy (NVML_GPM_METRIC_SM_UTIL)
  Reading<double> sm_occupancy_ratio;   ///< resident warps / maximum (SM_OCCUPANCY)
  Reading<double> tensor_active_ratio;  ///< share of time any tensor pipe ran (ANY_TENSOR_UTIL)
  Reading<double> dram_bw_util_ratio;   ///< DRAM bandwidth / peak (DRAM_BW_UTIL)
  /// Share of time any compute or graphics work ran (GRAPHICS_UTIL; DCGM's GR_ENGINE_ACTIVE)
  Reading<double> gr_engine_active_ratio;
  double window_s = 0;  ///< time between the two samples, >= 0.1 s
};

/// The driver's sample buffers that nvmlDeviceGetSamples reads. The sampler reads power and GPU
/// utilization; -q's report shows them all.
enum class DriverBuffer : std::uint8_t {
  kPower,               ///< total board power, W (every 20 ms on an H200, ~2.4 s kept)
  kGpuUtilization,      ///< kernel-active %, every 200 ms (~14 s kept)
  kMemoryUtilization,   ///< memory-controller busy %, every 200 ms
  kEncoderUtilization,  ///< %, every 200 ms
  kDecoderUtilization,
  kJpegUtilization,
  kOfaUtilization,
  kSmClock,      ///< MHz; an idle H200 keeps none (NOT_FOUND)
  kMemoryClock,  ///< MHz
};
inline constexpr unsigned kDriverBufferCount = 9;

struct DriverSample {
  std::uint64_t timestamp_us = 0;  ///< CPU time of the sample, us since 1970
  double value = 0;                ///< W for kPower, % otherwise
};

/// The samples newer than the previous read of the same buffer, oldest first. Empty (with
/// max and mean kNotAvailable) when the driver had none newer: an idle GPU's buffer runs dry.
struct DriverSamples {
  std::vector<DriverSample> samples;
  Reading<double> max;
  Reading<double> mean;
};

/// One process's utilization over the driver's last sample period.
struct ProcessUtilization {
  unsigned pid = 0;
  std::uint64_t timestamp_us = 0;  ///< CPU time of the sample, us since 1970
  unsigned sm_util_pct = 0;        ///< 0-100: share of time its kernels ran
  unsigned mem_util_pct = 0;       ///< 0-100: share of time it read or wrote device memory
};

/// PCIe throughput over the driver's ~20 ms counting window.
struct PcieThroughput {
  Reading<double> tx_bytes_per_s;  ///< from the GPU to the host
  Reading<double> rx_bytes_per_s;  ///< from the host to the GPU
};

/// Encoder or frame-buffer-capture sessions and their averages.
struct CodecSessions {
  Reading<unsigned> count;
  Reading<unsigned> average_fps;
  Reading<unsigned> average_latency_us;
};

/// ECC error counts of one scope (since the driver loaded, or over the board's life), split
/// as nvidia-smi -q splits them: on-chip SRAM and the DRAM.
struct EccSplit {
  Reading<std::uint64_t> sram_corrected;
  Reading<std::uint64_t> sram_uncorrected_parity;
  Reading<std::uint64_t> sram_uncorrected_secded;
  Reading<std::uint64_t> dram_corrected;
  Reading<std::uint64_t> dram_uncorrected;
};

/// Where the board's uncorrectable SRAM errors happened, over its life.
struct SramErrorSources {
  std::uint64_t l2 = 0, sm = 0, microcontroller = 0, pcie = 0, other = 0;
};

/// Memory banks by the spare rows they have left (nvmlDeviceGetRowRemapperHistogram).
struct RemapHistogram {
  unsigned max = 0, high = 0, partial = 0, low = 0, none = 0;
};

/// What only nvidia-smi -q's report shows and nothing else in gpumon uses. Read when a report
/// asks (about 20 NVML calls, a few ms), never by the sampler. A new member goes into
/// report_details_missing() too.
struct ReportDetails {
  Reading<unsigned> video_clock_mhz;
  Reading<unsigned> max_video_clock_mhz;
  Reading<unsigned> customer_boost_max_graphics_mhz;
  CodecSessions encoder;
  CodecSessions fbc;
  Reading<unsigned> pcie_replay_rollovers;
  Reading<bool> c2c_enabled;
  /// nvmlDeviceGpuRecoveryAction_t: 0 none, 1 reset, 2 reboot, 3 drain P2P, 4 drain and reset.
  Reading<unsigned> recovery_action;
  EccSplit ecc_volatile, ecc_aggregate;
  Reading<bool> sram_threshold_exceeded;
  Reading<SramErrorSources> sram_sources;
  Reading<bool> channel_repair_pending, tpc_repair_pending;
  Reading<bool> unrepairable_memory;
  /// Rows remapped whose remap is not in use yet (nvmlDeviceGetRemappedRows_v2).
  Reading<unsigned> remapped_rows_correctable_inactive, remapped_rows_uncorrectable_inactive;
  Reading<RemapHistogram> remap_histogram;
  /// The memory's share of the board's power (power fields at the memory scope).
  Reading<double> memory_power_average_w, memory_power_instant_w;
  /// Memory set aside for confidential computing.
  Reading<std::uint64_t> protected_memory_total_bytes, protected_memory_used_bytes,
      protected_memory_free_bytes;
  Reading<bool> egm_enabled;  ///< extended GPU memory (nvmlDeviceGetCapabilities)
};

/// A ReportDetails whose every value is missing for `why`.
ReportDetails report_details_missing(Missing why);

}  // namespace gpumon
