// SPDX-License-Identifier: MIT
// Plain data that the backend produces and every formatter consumes. Units are in the names;
// every dynamic value is a Reading, so "missing" stays apart from 0.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/reading.h"
#include "job/job_identity.h"

namespace gpumon {

/// What does not change while the process runs (read once, at open).
struct DeviceStatic {
  unsigned index = 0;                    ///< NVML index (PCI bus order)
  Reading<std::string> name;             ///< "NVIDIA H200"
  Reading<std::string> uuid;             ///< "GPU-xxxxxxxx-..." (sensitive: not shown by default)
  Reading<std::string> serial;           ///< board serial (sensitive: never shown by default)
  Reading<std::string> pci_bus_id;       ///< "00000000:18:00.0"
  Reading<std::uint32_t> pci_device_id;  ///< device id << 16 | vendor id
  Reading<std::uint32_t> pci_subsystem_id;  ///< the board's subsystem id << 16 | its vendor
  Reading<unsigned> minor_number;           ///< /dev/nvidiaN
  Reading<std::uint64_t> memory_total_bytes;
  Reading<unsigned> max_sm_clock_mhz;
  Reading<unsigned> max_mem_clock_mhz;
  Reading<unsigned> max_graphics_clock_mhz;
  Reading<bool> persistence_mode;
  Reading<bool> ecc_enabled;
  Reading<bool> ecc_pending;           ///< the ECC mode after the next reset
  Reading<std::string> vbios_version;  ///< "96.00.A5.00.1A"
  Reading<unsigned> compute_mode;      ///< nvmlComputeMode_t: 0 Default ... 3 Exclusive_Process
  Reading<bool> mig_mode_current;      ///< kNotSupported on a GPU without MIG
  Reading<bool> mig_mode_pending;      ///< the MIG mode after the next GPU reset
  /// The highest PCIe generation of this GPU in this system (the lower of GPU and host), and of
  /// the GPU alone; the widest link (lanes).
  Reading<unsigned> pcie_link_gen_max;
  Reading<unsigned> pcie_link_gen_gpu_max;
  Reading<unsigned> pcie_link_width_max;
  Reading<std::string> inforom_image_version;  ///< "G520.0282.02.02"
  /// The board's identity as nvidia-smi -q shows it (read once; none is a reading that moves).
  Reading<unsigned> brand;         ///< nvmlBrandType_t: 14 NVIDIA (q_report names them)
  Reading<unsigned> architecture;  ///< nvmlDeviceArchitecture_t: 9 Hopper
  Reading<unsigned> board_id;      ///< the same on the GPUs of one board
  Reading<bool> multi_gpu_board;
  Reading<std::string> board_part_number;     ///< "692-2G520-0282-001"
  Reading<std::string> gsp_firmware_version;  ///< "580.159.04"; NOT_SUPPORTED without GSP
  Reading<unsigned> module_id;                ///< the GPU's place on its baseboard (1-8)
  Reading<unsigned> virtualization_mode;  ///< nvmlGpuVirtualizationMode_t: 0 none, 1 pass-through
  Reading<unsigned> addressing_mode;      ///< 0 none, 1 HMM, 2 ATS (nvmlDeviceGetAddressingMode)
  Reading<unsigned> pci_base_class, pci_sub_class;  ///< 0x3 and 0x2: a 3D controller
  Reading<unsigned> accounting_buffer_size;         ///< processes the driver keeps accounting for
  /// Versions of the InfoROM's OEM, ECC and power management objects ("2.1", "7.16", N/A).
  Reading<std::string> inforom_oem_version, inforom_ecc_version, inforom_power_version;
  /// nvmlDeviceGetDisplayMode: whether a display may be attached. nvidia-smi 580 shows it as
  /// -q's "Display Attached" (Yes on a headless H200) and calls display_mode deprecated.
  Reading<bool> display_mode;
  Reading<bool> display_active;   ///< a display is initialized on the GPU
  Reading<bool> accounting_mode;  ///< the driver keeps per-process accounting
  /// The power limit's default and the range it may be set in, watts.
  Reading<double> power_default_limit_w, power_min_limit_w, power_max_limit_w;
  /// Applications clocks (what the GPU boosts to under load, set by `nvidia-smi -ac`) and their
  /// defaults, MHz. Read with the other details: a change made while gpumon runs is not seen.
  Reading<unsigned> applications_graphics_clock_mhz, applications_mem_clock_mhz;
  Reading<unsigned> default_applications_graphics_clock_mhz, default_applications_mem_clock_mhz;
  /// The temperature thresholds relative to T.Limit, degrees C (field values 193-196; an H200
  /// answers -8, -2, 0, 0): where the GPU shuts down, slows down in hardware, and the highest
  /// memory and GPU temperatures it is meant to run at. Ada and newer.
  Reading<int> tlimit_shutdown_c, tlimit_slowdown_c, tlimit_mem_max_c, tlimit_gpu_max_c;
  /// Set while the GPU cannot be opened for a reason other than being lost (nvmlDeviceGet-
  /// HandleByIndex answered no permission, a driver error, ...): NVML's words for it
  /// ("Insufficient Permissions"). Its readings are then missing for that reason.
  std::optional<std::string> open_error;
};

/// Driver-wide facts.
struct SystemInfo {
  Reading<std::string> driver_version;  ///< "580.159.04"
  Reading<std::string> nvml_version;    ///< "13.580.159.04"
  Reading<int> cuda_driver_version;     ///< 13000 = CUDA 13.0
  /// Non-empty when the GPUs are simulated by gpumon's fake NVML: the scenario's name.
  std::string simulated_scenario;
  std::string library_path;
};

/// CUDA driver version 13000 -> "13.0", 12040 -> "12.4".
std::string cuda_version_text(int version);

/// Bits of the clock-event (formerly "throttle") reasons mask, as NVML defines them.
enum ClockEventReason : std::uint64_t {
  kClockEventGpuIdle = 0x1,
  kClockEventApplicationsClocksSetting = 0x2,
  kClockEventSwPowerCap = 0x4,
  kClockEventHwSlowdown = 0x8,
  kClockEventSyncBoost = 0x10,
  kClockEventSwThermalSlowdown = 0x20,
  kClockEventHwThermalSlowdown = 0x40,
  kClockEventHwPowerBrakeSlowdown = 0x80,
  kClockEventDisplayClockSetting = 0x100,
};

/// Short names of the active reasons ("sw_power_cap", "hw_thermal_slowdown"), in bit order.
std::vector<std::string> clock_event_reason_names(std::uint64_t mask);

/// A call that has not returned: what it is and since when.
struct StaleCall {
  std::string call;  ///< the NVML function when the backend knows it, else the sampler's task
  std::chrono::steady_clock::time_point since{};  ///< when the call started
};

/// One reading of one GPU's dynamic state. Fields not requested stay kNotAvailable.
struct DeviceSample {
  unsigned index = 0;
  std::chrono::system_clock::time_point wall_time{};
  std::chrono::steady_clock::time_point mono_time{};
  bool lost = false;  ///< the GPU is lost (nvml::is_gpu_lost): every reading is kGpuLost
  /// Set by the sampler when this GPU's reader was still inside an earlier call as the tick was
  /// published: every reading is Missing::kStale. Not lost: the GPU may answer again.
  std::optional<StaleCall> stale;

  Reading<unsigned> utilization_gpu_pct;     ///< kernel-active % over NVML's 1/6-1 s window
  Reading<unsigned> utilization_memory_pct;  ///< memory-controller busy %
  Reading<std::uint64_t> memory_total_bytes;
  Reading<std::uint64_t> memory_reserved_bytes;  ///< driver/firmware reserve (v2 API only)
  Reading<std::uint64_t> memory_used_bytes;
  Reading<std::uint64_t> memory_free_bytes;
  Reading<unsigned> temperature_gpu_c;
  Reading<unsigned> temperature_memory_c;  ///< HBM temperature (field value 82)
  Reading<double> power_draw_w;            ///< 1 s average on Ampere and newer
  Reading<double> power_draw_instant_w;    ///< field value 186
  Reading<double> power_limit_w;           ///< enforced limit
  Reading<std::uint64_t> energy_mj;        ///< since driver load
  Reading<unsigned> sm_clock_mhz;
  Reading<unsigned> mem_clock_mhz;
  Reading<unsigned> graphics_clock_mhz;
  Reading<unsigned> pstate;  ///< 0..15
  Reading<unsigned> fan_speed_pct;
  Reading<std::uint64_t> clock_event_reasons;  ///< ClockEventReason bits
  Reading<std::uint64_t> ecc_corrected_volatile;
  Reading<std::uint64_t> ecc_uncorrected_volatile;
  Reading<unsigned> pcie_link_gen;              ///< current PCIe generation
  Reading<unsigned> pcie_link_width;            ///< current PCIe link width, lanes
  Reading<unsigned> utilization_encoder_pct;    ///< NVENC busy % over the driver's sample period
  Reading<unsigned> utilization_decoder_pct;    ///< NVDEC busy %, same
  Reading<double> power_draw_average_w;         ///< field value 185: the driver's 1 s average
  Reading<unsigned> pcie_replay_count;          ///< PCIe replays (retries) since the driver loaded
  Reading<unsigned> remapped_rows_correctable;  ///< rows remapped for correctable errors
  Reading<unsigned> remapped_rows_uncorrectable;  ///< rows remapped for uncorrectable errors
  Reading<unsigned> remapped_rows_pending;        ///< 1 while a remap waits for the next GPU reset
  Reading<unsigned> remapped_rows_failure;        ///< 1 once a remap failed (the GPU needs service)
  Reading<std::uint64_t> nvlink_data_tx_kib;      ///< NVLink payload sent, all links, cumulative
  Reading<std::uint64_t> nvlink_data_rx_kib;      ///< NVLink payload received, same
  Reading<unsigned> utilization_jpeg_pct;         ///< NVJPG busy % over the driver's sample period
  Reading<unsigned> utilization_ofa_pct;          ///< optical-flow accelerator busy %, likewise
  // Time the clocks were held down for each reason since the driver loaded (nvidia-smi -q's
  // "Clocks Event Reasons Counters"; NVML gives ns): field values 74, 76, 269, 270, 271.
  Reading<std::uint64_t> clock_event_sw_power_cap_ns;
  Reading<std::uint64_t> clock_event_sync_boost_ns;
  Reading<std::uint64_t> clock_event_sw_thermal_ns;
  Reading<std::uint64_t> clock_event_hw_thermal_ns;
  Reading<std::uint64_t> clock_event_hw_power_brake_ns;
  /// Degrees C below the GPU's T.Limit, the temperature at which it starts to slow down
  /// (nvidia-smi's "GPU T.Limit Temp"); negative once above it.
  Reading<int> temperature_margin_c;
  /// The PCIe BAR1 aperture through which the host and peers (GPUDirect) map device memory.
  Reading<std::uint64_t> bar1_total_bytes;
  Reading<std::uint64_t> bar1_used_bytes;

  // Filled by the sampler, not by GpuBackend::sample():
  // GPM (Hopper and newer), ratios 0-1 averaged over gpm_window_s, the time since the
  // previous GPM sample (at least 0.1 s).
  Reading<double> sm_active_ratio;
  Reading<double> sm_occupancy_ratio;
  Reading<double> tensor_active_ratio;
  Reading<double> dram_bw_util_ratio;
  Reading<double> gr_engine_active_ratio;
  Reading<double> gpm_window_s;
  // The driver's sample buffers (nvmlDeviceGetSamples) over the interval since the previous
  // read, so short spikes a 1 s poll misses are kept.
  Reading<double> power_max_w;
  Reading<unsigned> utilization_gpu_max_pct;
  // PCIe throughput, only when asked (each read blocks about 20 ms).
  Reading<double> pcie_tx_bytes_per_s;
  Reading<double> pcie_rx_bytes_per_s;
};

/// Something that happened to a GPU, stamped when gpumon learned of it (NVML events carry no
/// time of their own).
struct GpuEvent {
  enum class Kind : std::uint8_t {
    kXid,           ///< value = the XID (79 = fallen off the bus, 999 = unknown)
    kEccSingleBit,  ///< value = 0
    kEccDoubleBit,  ///< value = 0
    kLost,          ///< the GPU stopped answering (nvml::is_gpu_lost)
    kRecovered,     ///< a lost GPU answers again
  };
  unsigned gpu = 0;
  Kind kind = Kind::kXid;
  std::uint64_t value = 0;
  std::chrono::system_clock::time_point wall_time{};
  std::chrono::steady_clock::time_point mono_time{};
};

/// A compute process on a GPU, with what /proc says about it on this host.
struct GpuProcess {
  unsigned pid = 0;  ///< as NVML reports it (host PID namespace)
  unsigned gpu_index = 0;
  Reading<std::uint64_t> used_memory_bytes;  ///< missing under some MIG / vGPU setups
  Reading<unsigned> gpu_instance_id;         ///< MIG only
  Reading<unsigned> compute_instance_id;     ///< MIG only
  Reading<std::string> name;                 ///< nvmlSystemGetProcessName (full path)
  // Host details; kNoPermission or kNotAvailable when /proc hides them (hidepid, containers).
  Reading<std::string> user;
  Reading<std::string> command_line;
  Reading<double> cpu_percent;
  Reading<std::uint64_t> host_memory_rss_bytes;
  job::JobIdentity job;  ///< empty when unknown or not visible
  // From nvmlDeviceGetProcessUtilization (the sampler's processes task): the driver's newest
  // sample for this pid since the previous read; kNotAvailable when the driver had none.
  Reading<unsigned> sm_util_pct;   ///< 0-100: share of time its kernels ran
  Reading<unsigned> mem_util_pct;  ///< 0-100: share of time it read or wrote device memory
};

}  // namespace gpumon
