// SPDX-License-Identifier: MIT
// The scenario model of gpumon's fake NVML: plain data, filled by the parser
// (scenario_parser.cc) and read by the fake library's exports. No NVML calls here.
//
// Times are scenario seconds: 0 is nvmlInit (shifted by GPUMON_FAKE_TIME_OFFSET_S). Units are in
// the names. docs/scenarios.md describes the JSON that maps onto these structs.
#pragma once

#include <bitset>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpumon::fake {

/// Every value a scenario can describe per device. The first kSeriesCount are time series; the
/// rest are static facts that can only be marked unsupported or failing.
enum class Field : std::uint8_t {
  kUtilizationGpuPct,
  kUtilizationMemoryPct,
  kMemoryUsedBytes,
  kTemperatureGpuC,
  kTemperatureMemoryC,
  kPowerDrawMw,
  kPowerInstantMw,
  kPowerLimitMw,
  kEnergyMj,
  kSmClockMhz,
  kMemClockMhz,
  kGraphicsClockMhz,
  kPstate,
  kFanSpeedPct,
  kClockEventReasons,
  kEccCorrectedVolatile,
  kEccUncorrectedVolatile,
  kSmActivePct,      ///< GPM SM_UTIL
  kSmOccupancyPct,   ///< GPM SM_OCCUPANCY
  kTensorActivePct,  ///< GPM ANY_TENSOR_UTIL
  kDramBwUtilPct,    ///< GPM DRAM_BW_UTIL
  kPcieTxKbPerS,
  kPcieRxKbPerS,
  kPowerAverageMw,  ///< field value 185; defaults to power_draw_mw
  kEncoderUtilPct,
  kDecoderUtilPct,
  kPcieLinkGen,    ///< current generation; defaults to pcie_link_gen_max
  kPcieLinkWidth,  ///< current width; defaults to pcie_link_width_max
  kPcieReplayCount,
  kRemappedRowsCorrectable,    ///< field value 142
  kRemappedRowsUncorrectable,  ///< field value 143
  kRemappedRowsPending,        ///< field value 144
  kRemappedRowsFailure,        ///< field value 145
  kNvlinkDataTxKib,            ///< field value 138 (all links)
  kNvlinkDataRxKib,            ///< field value 139 (all links)
  kJpegUtilPct,
  kOfaUtilPct,
  kGrEngineActivePct,  ///< GPM GRAPHICS_UTIL; defaults to utilization_gpu_pct
  // Static facts (no series).
  kName,
  kUuid,
  kSerial,
  kPciInfo,
  kMinorNumber,
  kPersistenceMode,
  kEccMode,
  kMaxClocks,
  kProcesses,
  kSamples,
  kEvents,
  kProcessUtilization,
  kVbiosVersion,
  kComputeMode,
  kMigMode,
  kPcieLink,  ///< the PCIe link maxima (generation and width)
  kInforomImage,
  kDisplayActive,
  kAccountingMode,
  kDisplayMode,
  kPowerLimits,         ///< the default power limit and the range it may be set in
  kApplicationsClocks,  ///< the applications clocks and their defaults
  /// The clock-event time counters, from the time each `clock_event_reasons` bit was set: field
  /// values 74 (power cap), 76 (sync boost), and 269-271 (SW thermal, HW thermal, power brake).
  kPowerCapTime,
  kSyncBoostTime,
  kSlowdownTime,
  /// nvmlDeviceGetMarginTemperature (tlimit_c - temperature_gpu_c) and the T.Limit thresholds
  /// (field values 193-196).
  kTemperatureLimits,
  kBar1Memory,  ///< nvmlDeviceGetBAR1MemoryInfo
  /// What nvidia-smi -q shows of the board: brand, architecture, board id, multi-GPU board,
  /// board part number, module id.
  kBoardIdentity,
  kGspFirmware,  ///< nvmlDeviceGetGspFirmwareVersion
  kVirtualizationMode,
  kAddressingMode,
  kPciClass,  ///< nvmlDeviceGetPciInfoExt (its ids are pci_info's)
  kAccountingBufferSize,
  kInforomObjects,  ///< nvmlDeviceGetInforomVersion (an empty version: NOT_SUPPORTED)
  /// What only nvidia-smi -q shows: video and customer-boost clocks, encoder and FBC sessions,
  /// the SRAM/DRAM ECC split, repair status, remapped rows v2 and their histogram, C2C mode,
  /// protected memory, capabilities, and field values 95, 230 and memory power.
  kReportDetails,
  kCount,
};
inline constexpr std::size_t kSeriesCount = static_cast<std::size_t>(Field::kGrEngineActivePct) + 1;
inline constexpr std::size_t kFieldCount = static_cast<std::size_t>(Field::kCount);
using FieldSet = std::bitset<kFieldCount>;

/// The scenario key of a field ("power_draw_mw").
std::string_view field_name(Field f);
/// The field with that key, if any.
std::optional<Field> field_from_name(std::string_view name);
/// True for fields whose values are codes or bitmasks (no noise, no linear interpolation).
bool is_code_field(Field f);

/// A value over scenario time. All kinds share one struct; `kind` says which members count.
struct Series {
  enum class Kind : std::uint8_t { kConstant, kRamp, kPoints, kPeriodic };
  enum class Shape : std::uint8_t { kSine, kSquare, kSawtooth, kTriangle };
  struct Point {
    double t_s = 0;
    double value = 0;
  };

  Kind kind = Kind::kConstant;
  double value = 0;  ///< kConstant
  // kRamp: `from` until start_s, linear to `to` over duration_s, then `to`.
  double from = 0, to = 0, start_s = 0, duration_s = 1;
  // kPoints ("step" is kPoints with hold): sorted by t_s, strictly increasing.
  std::vector<Point> points;
  bool linear = false;  ///< interpolate between points (else hold the last one)
  double repeat_s = 0;  ///< > 0: the points repeat with this period
  // kPeriodic
  Shape shape = Shape::kSine;
  double min = 0, max = 0, period_s = 1, phase_s = 0, duty = 0.5;
  // Applied to every kind, in this order.
  double noise = 0;  ///< uniform in [-noise, +noise], deterministic in time
  double clamp_min = -std::numeric_limits<double>::infinity();
  double clamp_max = std::numeric_limits<double>::infinity();
  std::uint64_t noise_stream = 0;  ///< set by the parser: seed, device and field
};

/// Makes an NVML call (or every read of a field) fail with `code`.
struct ErrorRule {
  std::optional<Field> field;  ///< when set, matches wherever the field is read
  std::string call;  ///< otherwise an entry point ("nvmlDeviceGetPowerUsage", any version)
  int code = 0;      ///< nvmlReturn_t value
  double from_s = -std::numeric_limits<double>::infinity();
  double until_s = std::numeric_limits<double>::infinity();
  std::uint64_t every_nth = 0;  ///< > 0: only every Nth matching call fails
};

/// Makes an entry point take time: busy-waiting (CPU-bound, like NVML's slow calls) or sleeping.
struct LatencyRule {
  std::string call;  ///< entry point, any version unless one is named
  double us = 0;
  bool sleep = false;
  double from_s = -std::numeric_limits<double>::infinity();
  double until_s = std::numeric_limits<double>::infinity();
};

struct ProcessSpec {
  unsigned pid = 0;
  std::string name;
  std::optional<Series> used_memory_bytes;  ///< absent: NVML's "not available"
  double start_s = -std::numeric_limits<double>::infinity();
  double end_s = std::numeric_limits<double>::infinity();
  std::uint64_t visible_from_call = 0;  ///< listed only from this process-list call on (1-based)
  // nvmlDeviceGetProcessUtilization; a process without them has no utilization samples. Not
  // clamped: a value over 100 reproduces the driver's bogus samples.
  std::optional<Series> sm_util_pct;
  std::optional<Series> mem_util_pct;
};

/// An NVML event: an XID ("xid_events") or an ECC error ("ecc_events").
struct XidEvent {
  double at_s = 0;
  std::uint64_t xid = 0;           ///< eventData; 0 for ECC events
  std::uint64_t event_type = 0x8;  ///< nvmlEventType* bit: 0x8 XID, 0x1/0x2 ECC
};

struct DeviceSpec {
  std::string name = "NVIDIA Fake GPU";
  std::string uuid;
  std::string serial;
  std::string pci_bus_id;  ///< "00000000:18:00.0"
  unsigned pci_domain = 0, pci_bus = 0, pci_device = 0;
  std::uint32_t pci_device_id = 0x233510DE;  ///< device << 16 | vendor (H200 SXM)
  std::uint32_t pci_subsystem_id = 0x18BF10DE;
  unsigned minor_number = 0;
  std::uint64_t memory_total_bytes = 150754820096ULL;
  std::uint64_t memory_reserved_bytes = 0;
  unsigned max_sm_clock_mhz = 1980, max_mem_clock_mhz = 3201, max_graphics_clock_mhz = 1980;
  bool persistence_mode = true;
  bool ecc_enabled = true;
  std::optional<bool> ecc_pending;  ///< the ECC mode after the next reset; default: ecc_enabled
  std::string vbios_version = "96.00.A5.00.1A";
  unsigned compute_mode = 0;  ///< nvmlComputeMode_t: 0 Default, 1 Exclusive_Thread, ...
  bool mig_mode_current = false, mig_mode_pending = false;
  unsigned pcie_link_gen_max = 5, pcie_link_gen_gpu_max = 5, pcie_link_width_max = 16;
  std::string inforom_image_version = "G520.0282.02.02";
  bool display_active = false;
  bool accounting_mode = false;
  bool display_mode = true;  ///< nvmlDeviceGetDisplayMode: Enabled, as on the H200 (driver 580)
  unsigned power_limit_mw = 700000;
  unsigned power_default_limit_mw = 700000, power_min_limit_mw = 200000;
  unsigned power_max_limit_mw = 700000;  ///< as an H200 SXM answers
  unsigned applications_graphics_clock_mhz = 1980, applications_mem_clock_mhz = 3201;
  unsigned default_applications_graphics_clock_mhz = 1980,
           default_applications_mem_clock_mhz = 3201;
  double energy_at_start_mj = 0;
  /// The temperature at which the GPU starts to slow down; an H200 idle at 35 C answers a margin
  /// of 52, so 87. The thresholds relative to it are the H200's (driver 580).
  int tlimit_c = 87;
  int tlimit_shutdown_c = -8, tlimit_slowdown_c = -2, tlimit_mem_max_c = 0, tlimit_gpu_max_c = 0;
  std::uint64_t bar1_total_bytes = 262144ULL << 20, bar1_used_bytes = 1ULL << 20;  ///< as an H200
  // The board as an H200 SXM answers (driver 580); virtualization 0 is bare metal.
  unsigned brand = 14, architecture = 9;  ///< NVML_BRAND_NVIDIA, NVML_DEVICE_ARCH_HOPPER
  unsigned board_id = 6, module_id = 1;
  bool multi_gpu_board = false;
  std::string board_part_number = "692-2G520-0282-001";
  std::string gsp_firmware_version = "580.159.04";
  unsigned virtualization_mode = 0, addressing_mode = 0;
  unsigned pci_base_class = 3, pci_sub_class = 2;
  unsigned accounting_buffer_size = 4000;
  std::string inforom_oem_version = "2.1", inforom_ecc_version = "7.16", inforom_power_version;
  // What only nvidia-smi -q shows (fact kReportDetails), as an idle H200 answers on driver 580;
  // the counts, sessions and flags not listed are 0 and the histogram's other bins empty.
  unsigned video_clock_mhz = 765, max_video_clock_mhz = 1545, customer_boost_max_mhz = 1980;
  unsigned remap_banks_max = 3072;
  unsigned recovery_action = 0;  ///< nvmlDeviceGpuRecoveryAction_t: 0 none ... 4 drain and reset
  bool c2c_enabled = false;
  /// The memory's average power (field 185 at the memory scope); its instantaneous power is
  /// NOT_SUPPORTED, as on the H200.
  unsigned memory_power_mw = 39240;

  std::vector<Series> series = std::vector<Series>(kSeriesCount);
  bool energy_from_power = true;  ///< energy_mj is energy_at_start_mj + the integral of power
  FieldSet unsupported;
  std::vector<ErrorRule> errors;
  std::vector<LatencyRule> latencies;
  std::vector<ProcessSpec> processes;
  std::vector<XidEvent> xid_events;  ///< XID and ECC events, sorted by at_s
  bool gpm_supported = false;        ///< default: true for Hopper/Blackwell names (H100, H200, ...)
  std::optional<double> lost_at_s;
  std::optional<double> recovers_at_s;

  const Series& at(Field f) const { return series[static_cast<std::size_t>(f)]; }
  Series& at(Field f) { return series[static_cast<std::size_t>(f)]; }
  bool lost_at(double t_s) const {
    return lost_at_s && t_s >= *lost_at_s && !(recovers_at_s && t_s >= *recovers_at_s);
  }
};

struct Scenario {
  std::string name;  ///< shown by every gpumon output as the simulated scenario
  std::string description;
  std::string driver_version = "580.159.04";
  std::string nvml_version = "13.580.159.04";
  int cuda_driver_version = 13000;
  int init_error = 0;  ///< nvmlReturn_t that nvmlInit returns; 0 = success
  double init_latency_us = 0;
  std::uint64_t seed = 1;
  std::vector<LatencyRule> latencies;  ///< for every device; a device's own rules come first
  std::vector<DeviceSpec> devices;
};

/// Limits that keep a hostile scenario from exhausting memory.
inline constexpr std::size_t kMaxDevices = 1024;
inline constexpr std::size_t kMaxPointsPerSeries = 100000;
/// Points, processes, events and rules of all devices together (templates multiply them).
inline constexpr std::size_t kMaxItemsTotal = 2000000;
inline constexpr std::size_t kMaxProcessesTotal = 65536;
inline constexpr std::size_t kMaxProcessesPerDevice = 4096;
inline constexpr std::size_t kMaxEventsPerDevice = 100000;
inline constexpr std::size_t kMaxRules = 1000;
inline constexpr std::size_t kMaxScenarioBytes = 64U << 20U;
inline constexpr double kMaxTimeS = 1e9;

}  // namespace gpumon::fake
