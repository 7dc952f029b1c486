// SPDX-License-Identifier: MIT
#include "query/gpu_fields.h"

#include <fmt/format.h>

namespace gpumon::query {
namespace {

using G = MetricGroup;
using S = GpuRowSource;
using Style = CsvStyle;

Cell index_of(const S& s) {
  return Cell(Scalar(std::uint64_t{s.device.index}));
}
// A PCI id (device or subsystem << 16 | vendor) as nvidia-smi prints it: 0x233510DE.
template <Reading<std::uint32_t> DeviceStatic::*Member>
Cell pci_id_hex(const S& s) {
  return to_cell(s.device.*Member, [](std::uint32_t id) { return fmt::format("0x{:08X}", id); });
}
template <Reading<unsigned> DeviceStatic::*Member>
Cell short_hex(const S& s) {
  return to_cell(s.device.*Member, [](unsigned v) { return fmt::format("0x{:X}", v); });
}

// nvidia-smi's words for nvmlDeviceGetAddressingMode's value.
Cell addressing_mode_name(const S& s) {
  return to_cell(s.device.addressing_mode, [](unsigned mode) -> std::string {
    switch (mode) {
      case 0: return "None";
      case 1: return "HMM";
      case 2: return "ATS";
    }
    return "Unknown";
  });
}

// nvidia-smi's words for nvmlComputeMode_t.
Cell compute_mode_name(const S& s) {
  return to_cell(s.device.compute_mode, [](unsigned mode) -> std::string {
    switch (mode) {
      case 0: return "Default";
      case 1: return "Exclusive_Thread";
      case 2: return "Prohibited";
      case 3: return "Exclusive_Process";
    }
    return "Unknown";
  });
}

// One function per clock-event reason bit, so each table row stays a plain function pointer.
template <std::uint64_t Bit>
Cell reason_active(const S& s) {
  return to_cell(s.sample.clock_event_reasons,
                 [](std::uint64_t mask) { return (mask & Bit) != 0; });
}

// A clock-event time counter in whole microseconds, as nvidia-smi prints it (NVML's ns,
// truncated: 40139034816 ns is 40139034 us).
template <Reading<std::uint64_t> DeviceSample::*Counter>
Cell event_time_us(const S& s) {
  return to_cell(s.sample.*Counter, [](std::uint64_t ns) { return ns / 1000; });
}

std::vector<GpuField> make_gpu_fields() {
  // clang-format off
  std::vector<GpuField> t = {
    {{"timestamp", {}, "", "", Style::kTimestamp,
      "When this GPU was read: local time YYYY/MM/DD HH:MM:SS.mmm (JSON: ISO 8601 with offset)."},
     {}, [](const S& s) { return Cell(Scalar(s.sample.wall_time)); }},
    {{"driver_version", {}, "", "", Style::kPlain, "Version of the installed NVIDIA driver."},
     {}, [](const S& s) { return to_cell(s.system.driver_version); }},
    {{"count", {}, "", "", Style::kPlain,
      "Number of GPUs in the system (all of them, whatever -i selects)."},
     {}, [](const S& s) { return Cell(Scalar(std::uint64_t{s.device_count})); }},
    {{"name", {"gpu_name"}, "", "", Style::kPlain, "Product name, e.g. NVIDIA H200.", false,
      false, "product_name"},
     {}, [](const S& s) { return to_cell(s.device.name); }},
    {{"serial", {"gpu_serial"}, "", "", Style::kPlain,
      "Serial number printed on the board. Identifies the machine: share with care."},
     {}, [](const S& s) { return to_cell(s.device.serial); }},
    {{"uuid", {"gpu_uuid"}, "", "", Style::kPlain,
      "Unique id of the GPU (GPU-...), stable across reboots and PCI slot changes."},
     {}, [](const S& s) { return to_cell(s.device.uuid); }},
    {{"pci.bus_id", {"gpu_bus_id"}, "", "", Style::kPlain,
      "PCI address domain:bus:device.function in hex, e.g. 00000000:18:00.0."},
     {}, [](const S& s) { return to_cell(s.device.pci_bus_id); }},
    {{"pci.device_id", {}, "", "", Style::kPlain,
      "PCI device id (high 16 bits) and vendor id (low 16 bits), as 0xDDDDVVVV."},
     {}, pci_id_hex<&DeviceStatic::pci_device_id>},
    {{"pci.sub_device_id", {}, "", "", Style::kPlain,
      "PCI subsystem id of the board (high 16 bits) and its vendor (low 16 bits), as 0xSSSSVVVV."},
     {}, pci_id_hex<&DeviceStatic::pci_subsystem_id>},
    {{"pci.baseClass", {}, "", "", Style::kPlain,
      "PCI base class code in hex: 0x3 is a display controller (read at start).", true},
     G::kStaticDetails, short_hex<&DeviceStatic::pci_base_class>},
    {{"pci.subClass", {}, "", "", Style::kPlain,
      "PCI sub class code in hex: 0x2 is a 3D controller, 0x0 VGA (read at start).", true},
     G::kStaticDetails, short_hex<&DeviceStatic::pci_sub_class>},
    {{"index", {}, "", "", Style::kPlain,
      "NVML index of the GPU (PCI order; CUDA_VISIBLE_DEVICES may number differently)."},
     {}, index_of},
    {{"persistence_mode", {}, "", "", Style::kEnabled,
      "Whether the driver stays loaded with no client (Enabled / Disabled; read at start)."},
     G::kStaticDetails, [](const S& s) { return to_cell(s.device.persistence_mode); }},
    {{"vbios_version", {}, "", "", Style::kPlain, "Version of the GPU board's BIOS (read at start)."},
     G::kStaticDetails, [](const S& s) { return to_cell(s.device.vbios_version); }},
    {{"compute_mode", {}, "", "", Style::kPlain,
      "Who may create CUDA contexts: Default, Exclusive_Process, Prohibited (read at start)."},
     G::kStaticDetails, compute_mode_name},
    {{"mig.mode.current", {}, "", "", Style::kEnabled,
      "Whether MIG mode is on now (Enabled / Disabled; [N/A] without MIG; read at start).",
      true},
     G::kStaticDetails, [](const S& s) { return to_cell(s.device.mig_mode_current); }},
    {{"mig.mode.pending", {}, "", "", Style::kEnabled,
      "The MIG mode the GPU will run in after its next reset (read at start).", true},
     G::kStaticDetails, [](const S& s) { return to_cell(s.device.mig_mode_pending); }},
    {{"pcie.link.gen.max", {}, "", "", Style::kPlain,
      "Highest PCIe generation in this system: the GPU's or the host's, whichever is lower."},
     G::kStaticDetails, [](const S& s) { return to_cell(s.device.pcie_link_gen_max); }},
    {{"pcie.link.gen.gpumax", {}, "", "", Style::kPlain,
      "Highest PCIe generation the GPU supports (read at start)."},
     G::kStaticDetails, [](const S& s) { return to_cell(s.device.pcie_link_gen_gpu_max); }},
    {{"pcie.link.width.max", {}, "", "", Style::kPlain,
      "Widest PCIe link of this GPU in this system, in lanes (read at start)."},
     G::kStaticDetails, [](const S& s) { return to_cell(s.device.pcie_link_width_max); }},
    {{"inforom.img", {"inforom.image"}, "", "", Style::kPlain,
      "Version of the GPU's InfoROM image (read at start)."},
     G::kStaticDetails, [](const S& s) { return to_cell(s.device.inforom_image_version); }},
    {{"inforom.oem", {}, "", "", Style::kPlain,
      "Version of the InfoROM's OEM configuration object (read at start).", true},
     G::kStaticDetails, [](const S& s) { return to_cell(s.device.inforom_oem_version); }},
    {{"inforom.ecc", {}, "", "", Style::kPlain,
      "Version of the InfoROM's ECC object, where ECC counts are kept (read at start).", true},
     G::kStaticDetails, [](const S& s) { return to_cell(s.device.inforom_ecc_version); }},
    {{"inforom.pwr", {"inforom.power"}, "", "", Style::kPlain,
      "Version of the InfoROM's power management object (read at start).", true},
     G::kStaticDetails, [](const S& s) { return to_cell(s.device.inforom_power_version); }},
    // nvidia-smi 580 answers [Requested functionality has been deprecated] whatever NVML says
    // (Enabled on a headless H200, checked there); the value moved to -q's Display Attached.
    {{"display_mode", {}, "", "", Style::kEnabled,
      "Deprecated by NVIDIA, printed as nvidia-smi 580 prints it (-q's Display Attached has "
      "the value)."},
     {}, [](const S&) { return Cell::missing(Missing::kDeprecated); }},
    {{"display_active", {}, "", "", Style::kEnabled,
      "Whether a display is initialized on the GPU (Enabled / Disabled; read at start)."},
     G::kStaticDetails, [](const S& s) { return to_cell(s.device.display_active); }},
    {{"accounting.mode", {}, "", "", Style::kEnabled,
      "Whether the driver keeps per-process accounting (Enabled / Disabled; read at start)."},
     G::kStaticDetails, [](const S& s) { return to_cell(s.device.accounting_mode); }},
    {{"accounting.buffer_size", {}, "", "", Style::kPlain,
      "How many processes the driver keeps accounting for before it drops the oldest.", true},
     G::kStaticDetails, [](const S& s) { return to_cell(s.device.accounting_buffer_size); }},
    {{"addressing_mode", {}, "", "", Style::kPlain,
      "How the GPU reaches host memory allocated by malloc/mmap: HMM, ATS or None.", true},
     G::kStaticDetails, addressing_mode_name},
    {{"platform.module_id", {}, "", "", Style::kPlain,
      "The GPU's module number on its baseboard (an HGX board's 1-8; read at start).", true},
     G::kStaticDetails, [](const S& s) { return to_cell(s.device.module_id); }},
    {{"pcie.link.gen.current", {}, "", "", Style::kPlain,
      "PCIe generation of the link now (nvidia-smi's older name for pcie.link.gen.gpucurrent)."},
     G::kPcieLinkGen, [](const S& s) { return to_cell(s.sample.pcie_link_gen); }},
    {{"pcie.link.gen.gpucurrent", {}, "", "", Style::kPlain,
      "PCIe generation of the link now; lower while the GPU idles."},
     G::kPcieLinkGen, [](const S& s) { return to_cell(s.sample.pcie_link_gen); }},
    {{"pcie.link.width.current", {}, "", "", Style::kPlain,
      "PCIe link width now, in lanes; may be lower while the GPU idles."},
     G::kPcieLinkWidth, [](const S& s) { return to_cell(s.sample.pcie_link_width); }},
    {{"fan.speed", {}, "%", "%", Style::kPlain,
      "Fan speed the driver asks for, in percent of maximum. Passively cooled boards have none.",
      true},
     G::kFan, [](const S& s) { return to_cell(s.sample.fan_speed_pct); }},
    {{"pstate", {}, "", "", Style::kPstate,
      "Performance state, P0 (fastest) to P15 (slowest). JSON gives the number."},
     G::kPstate, [](const S& s) { return to_cell(s.sample.pstate); }},
    {{"clocks_event_reasons.active", {"clocks_throttle_reasons.active"}, "", "", Style::kHexMask,
      "Bit mask of the reasons that hold clocks below maximum right now (JSON: the integer)."},
     G::kClockEvents, [](const S& s) { return to_cell(s.sample.clock_event_reasons); }},
    {{"clocks_event_reasons.gpu_idle", {"clocks_throttle_reasons.gpu_idle"}, "", "", Style::kActive,
      "Clocks are low because nothing runs on the GPU."},
     G::kClockEvents, reason_active<kClockEventGpuIdle>},
    {{"clocks_event_reasons.applications_clocks_setting",
      {"clocks_throttle_reasons.applications_clocks_setting"}, "", "", Style::kActive,
      "Clocks are capped by an application-clocks setting."},
     G::kClockEvents, reason_active<kClockEventApplicationsClocksSetting>},
    {{"clocks_event_reasons.sw_power_cap", {"clocks_throttle_reasons.sw_power_cap"}, "", "",
      Style::kActive, "The driver lowers clocks to stay under the power limit."},
     G::kClockEvents, reason_active<kClockEventSwPowerCap>},
    {{"clocks_event_reasons.hw_slowdown", {"clocks_throttle_reasons.hw_slowdown"}, "", "",
      Style::kActive, "Hardware slowdown: overheating, power brake or a power supply problem."},
     G::kClockEvents, reason_active<kClockEventHwSlowdown>},
    {{"clocks_event_reasons.sync_boost", {"clocks_throttle_reasons.sync_boost"}, "", "",
      Style::kActive, "Clocks follow other GPUs of a sync-boost group."},
     G::kClockEvents, reason_active<kClockEventSyncBoost>},
    {{"clocks_event_reasons.sw_thermal_slowdown", {"clocks_throttle_reasons.sw_thermal_slowdown"},
      "", "", Style::kActive, "The driver lowers clocks to keep GPU or memory temperature down."},
     G::kClockEvents, reason_active<kClockEventSwThermalSlowdown>},
    {{"clocks_event_reasons.hw_thermal_slowdown", {"clocks_throttle_reasons.hw_thermal_slowdown"},
      "", "", Style::kActive, "The hardware lowers clocks because it is too hot."},
     G::kClockEvents, reason_active<kClockEventHwThermalSlowdown>},
    {{"clocks_event_reasons.hw_power_brake_slowdown",
      {"clocks_throttle_reasons.hw_power_brake_slowdown"}, "", "", Style::kActive,
      "An external power-brake signal (e.g. from the power supply) lowers clocks."},
     G::kClockEvents, reason_active<kClockEventHwPowerBrakeSlowdown>},
    {{"clocks_event_reasons_counters.sw_power_cap", {}, "us", "us", Style::kPlain,
      "Time the driver held clocks down to stay under the power limit, since it loaded."},
     G::kPerfPolicyTime, event_time_us<&DeviceSample::clock_event_sw_power_cap_ns>},
    {{"clocks_event_reasons_counters.sync_boost", {}, "us", "us", Style::kPlain,
      "Time clocks followed the slowest GPU of a sync-boost group, since the driver loaded."},
     G::kPerfPolicyTime, event_time_us<&DeviceSample::clock_event_sync_boost_ns>},
    {{"clocks_event_reasons_counters.sw_thermal_slowdown", {}, "us", "us", Style::kPlain,
      "Time the driver held clocks down to keep GPU or memory temperature down."},
     G::kSlowdownTime, event_time_us<&DeviceSample::clock_event_sw_thermal_ns>},
    {{"clocks_event_reasons_counters.hw_thermal_slowdown", {}, "us", "us", Style::kPlain,
      "Time the hardware cut clocks (by half or more) because it was too hot."},
     G::kSlowdownTime, event_time_us<&DeviceSample::clock_event_hw_thermal_ns>},
    {{"clocks_event_reasons_counters.hw_power_brake_slowdown", {}, "us", "us", Style::kPlain,
      "Time an external power-brake signal (e.g. from the power supply) cut clocks."},
     G::kSlowdownTime, event_time_us<&DeviceSample::clock_event_hw_power_brake_ns>},
    {{"memory.total", {}, "MiB", "bytes", Style::kMib,
      "Device memory size (CSV: MiB, rounded up as nvidia-smi does; JSON: bytes)."},
     {}, [](const S& s) { return to_cell(s.device.memory_total_bytes); }},
    {{"memory.reserved", {}, "MiB", "bytes", Style::kMib,
      "Device memory set aside by the driver and firmware."},
     G::kMemory, [](const S& s) { return to_cell(s.sample.memory_reserved_bytes); }},
    {{"memory.used", {}, "MiB", "bytes", Style::kMib,
      "Device memory allocated by processes (the reserved part not included)."},
     G::kMemory, [](const S& s) { return to_cell(s.sample.memory_used_bytes); }},
    {{"memory.free", {}, "MiB", "bytes", Style::kMib, "Device memory nobody has allocated."},
     G::kMemory, [](const S& s) { return to_cell(s.sample.memory_free_bytes); }},
    {{"utilization.gpu", {}, "%", "%", Style::kPlain,
      "Share of the last 1/6 to 1 s in which at least one kernel ran (not how busy the SMs were)."},
     G::kUtilization, [](const S& s) { return to_cell(s.sample.utilization_gpu_pct); }},
    {{"utilization.memory", {}, "%", "%", Style::kPlain,
      "Share of the same window in which device memory was being read or written."},
     G::kUtilization, [](const S& s) { return to_cell(s.sample.utilization_memory_pct); }},
    {{"utilization.encoder", {}, "%", "%", Style::kPlain,
      "Share of the driver's last sample period (1/6 to 1 s) in which the video encoder ran."},
     G::kEncoderUtil, [](const S& s) { return to_cell(s.sample.utilization_encoder_pct); }},
    {{"utilization.decoder", {}, "%", "%", Style::kPlain,
      "Share of the same period in which the video decoder ran."},
     G::kDecoderUtil, [](const S& s) { return to_cell(s.sample.utilization_decoder_pct); }},
    {{"utilization.jpeg", {}, "%", "%", Style::kPlain,
      "Share of the driver's last sample period (1/6 to 1 s) in which the JPEG decoder ran."},
     G::kJpegUtil, [](const S& s) { return to_cell(s.sample.utilization_jpeg_pct); }},
    {{"utilization.ofa", {}, "%", "%", Style::kPlain,
      "Share of the driver's last sample period in which the optical-flow accelerator ran."},
     G::kOfaUtil, [](const S& s) { return to_cell(s.sample.utilization_ofa_pct); }},
    {{"ecc.mode.current", {}, "", "", Style::kEnabled,
      "Whether ECC protects device memory now (Enabled / Disabled; read at start)."},
     G::kStaticDetails, [](const S& s) { return to_cell(s.device.ecc_enabled); }},
    {{"ecc.mode.pending", {}, "", "", Style::kEnabled,
      "The ECC mode the GPU will run in after its next reset (read at start)."},
     G::kStaticDetails, [](const S& s) { return to_cell(s.device.ecc_pending); }},
    {{"ecc.errors.corrected.volatile.total", {}, "", "", Style::kPlain,
      "Memory errors ECC corrected since the driver loaded."},
     G::kEcc, [](const S& s) { return to_cell(s.sample.ecc_corrected_volatile); }},
    {{"ecc.errors.uncorrected.volatile.total", {}, "", "", Style::kPlain,
      "Memory errors ECC could not correct since the driver loaded (non-zero: check the GPU)."},
     G::kEcc, [](const S& s) { return to_cell(s.sample.ecc_uncorrected_volatile); }},
    {{"temperature.gpu", {}, "", "C", Style::kPlain, "GPU core temperature in degrees Celsius."},
     G::kTemperature, [](const S& s) { return to_cell(s.sample.temperature_gpu_c); }},
    {{"temperature.gpu.tlimit", {}, "", "C", Style::kPlain,
      "Degrees below the GPU's T.Limit, where it starts to slow down (negative above it).",
      false, false, "temperature.gpu_tlimit"},
     G::kTemperatureMargin, [](const S& s) { return to_cell(s.sample.temperature_margin_c); }},
    {{"temperature.memory", {}, "", "C", Style::kPlain,
      "Memory (HBM) temperature in degrees Celsius, where the GPU reports it."},
     G::kMemoryTemperature, [](const S& s) { return to_cell(s.sample.temperature_memory_c); }},
    {{"power.draw", {}, "W", "W", Style::kFixed2,
      "Board power; a 1 s average on Ampere and newer, instantaneous before."},
     G::kPower, [](const S& s) { return to_cell(s.sample.power_draw_w); }},
    {{"power.draw.instant", {"gpu.power.draw.instant"}, "W", "W", Style::kFixed2,
      "Board power right now, without averaging.", false, false, "power.draw_instant"},
     G::kPowerInstant, [](const S& s) { return to_cell(s.sample.power_draw_instant_w); }},
    {{"power.draw.average", {"gpu.power.draw.average"}, "W", "W", Style::kFixed2,
      "Board power averaged by the driver over the last second (Ampere and newer).", false, false,
      "power.draw_average"},
     G::kPowerAverage, [](const S& s) { return to_cell(s.sample.power_draw_average_w); }},
    {{"power.limit", {"gpu.power.requested_limit"}, "W", "W", Style::kFixed2,
      "Power ceiling. gpumon shows the enforced limit here (see docs/query.md)."},
     G::kPowerLimit, [](const S& s) { return to_cell(s.sample.power_limit_w); }},
    {{"enforced.power.limit", {"gpu.power.current_limit"}, "W", "W", Style::kFixed2,
      "Power ceiling the GPU enforces: the lowest of all active limits."},
     G::kPowerLimit, [](const S& s) { return to_cell(s.sample.power_limit_w); }},
    {{"power.default_limit", {"gpu.power.default_limit"}, "W", "W", Style::kFixed2,
      "Power ceiling the driver sets back after it reloads."},
     G::kStaticDetails, [](const S& s) { return to_cell(s.device.power_default_limit_w); }},
    {{"power.min_limit", {"gpu.power.min_limit"}, "W", "W", Style::kFixed2,
      "Lowest value the power limit can be set to."},
     G::kStaticDetails, [](const S& s) { return to_cell(s.device.power_min_limit_w); }},
    {{"power.max_limit", {"gpu.power.max_limit"}, "W", "W", Style::kFixed2,
      "Highest value the power limit can be set to."},
     G::kStaticDetails, [](const S& s) { return to_cell(s.device.power_max_limit_w); }},
    {{"energy.total", {"energy", "total_energy_consumption"}, "J", "J", Style::kFixed3,
      "Energy used since the driver loaded, in joules (slow to read: about 2 ms).", false, true},
     G::kEnergy, [](const S& s) {
       return to_cell(s.sample.energy_mj, [](std::uint64_t mj) { return static_cast<double>(mj) / 1000.0; });
     }},
    {{"clocks.current.graphics", {"clocks.gr"}, "MHz", "MHz", Style::kPlain,
      "Graphics clock now."},
     G::kGraphicsClock, [](const S& s) { return to_cell(s.sample.graphics_clock_mhz); }},
    {{"clocks.current.sm", {"clocks.sm"}, "MHz", "MHz", Style::kPlain,
      "Streaming-multiprocessor clock now."},
     G::kSmClock, [](const S& s) { return to_cell(s.sample.sm_clock_mhz); }},
    {{"clocks.current.memory", {"clocks.mem"}, "MHz", "MHz", Style::kPlain,
      "Memory clock now."},
     G::kMemClock, [](const S& s) { return to_cell(s.sample.mem_clock_mhz); }},
    {{"clocks.applications.graphics", {"clocks.applications.gr"}, "MHz", "MHz", Style::kPlain,
      "Graphics clock the GPU runs applications at (nvidia-smi -ac sets it)."},
     G::kStaticDetails,
     [](const S& s) { return to_cell(s.device.applications_graphics_clock_mhz); }},
    {{"clocks.applications.memory", {"clocks.applications.mem"}, "MHz", "MHz", Style::kPlain,
      "Memory clock the GPU runs applications at (nvidia-smi -ac sets it)."},
     G::kStaticDetails, [](const S& s) { return to_cell(s.device.applications_mem_clock_mhz); }},
    {{"clocks.default_applications.graphics", {"clocks.default_applications.gr"}, "MHz", "MHz",
      Style::kPlain, "Default applications graphics clock."},
     G::kStaticDetails,
     [](const S& s) { return to_cell(s.device.default_applications_graphics_clock_mhz); }},
    {{"clocks.default_applications.memory", {"clocks.default_applications.mem"}, "MHz", "MHz",
      Style::kPlain, "Default applications memory clock."},
     G::kStaticDetails,
     [](const S& s) { return to_cell(s.device.default_applications_mem_clock_mhz); }},
    {{"clocks.max.graphics", {"clocks.max.gr"}, "MHz", "MHz", Style::kPlain,
      "Highest graphics clock the GPU supports."},
     G::kStaticDetails, [](const S& s) { return to_cell(s.device.max_graphics_clock_mhz); }},
    {{"clocks.max.sm", {}, "MHz", "MHz", Style::kPlain, "Highest SM clock the GPU supports."},
     G::kStaticDetails, [](const S& s) { return to_cell(s.device.max_sm_clock_mhz); }},
    {{"clocks.max.memory", {"clocks.max.mem"}, "MHz", "MHz", Style::kPlain,
      "Highest memory clock the GPU supports."},
     G::kStaticDetails, [](const S& s) { return to_cell(s.device.max_mem_clock_mhz); }},
  };
  // clang-format on
  return t;
}

}  // namespace

const std::vector<GpuField>& gpu_fields() {
  static const std::vector<GpuField> kFields = make_gpu_fields();
  return kFields;
}

}  // namespace gpumon::query
