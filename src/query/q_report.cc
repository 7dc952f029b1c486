// SPDX-License-Identifier: MIT
#include "query/q_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "gpu/pci_bus_id.h"
#include "query/app_fields.h"
#include "query/gpu_fields.h"
#include "query/value_format.h"

namespace gpumon::query {
namespace {

using G = MetricGroup;

// The sections -d cannot choose: shown only in the whole report.
constexpr unsigned kQWholeOnly = 1U << 31;

// Everything one row's value may come from.
struct RowSource {
  const QGpu& gpu;
  GpuRowSource fields;
};

// The text for a value gpumon could not get: nvidia-smi's word for it, without CSV's brackets.
std::string missing_text(Missing why) {
  std::string_view token = missing_token(why);
  if (token.size() >= 2 && token.front() == '[') token = token.substr(1, token.size() - 2);
  return std::string(token);
}

template <typename T, typename Show>
std::string shown(const Reading<T>& r, Show show) {
  return r.has_value() ? show(*r) : missing_text(r.why());
}

// The board's identity lines: nvidia-smi shows what the GPU does not have as N/A (GSP
// Firmware Version on a GPU without GSP).
std::string na_or_why(Missing why) {
  return why == Missing::kNotSupported ? "N/A" : missing_text(why);
}
template <typename T, typename Show>
std::string identity(const Reading<T>& r, Show show) {
  return r.has_value() ? show(*r) : na_or_why(r.why());
}

enum class Kind : std::uint8_t {
  kHeading,    // a label with no value: "    FB Memory Usage"
  kNotRead,    // a value gpumon does not read: "N/A"
  kField,      // a --query-gpu field, with an optional suffix (" C", "x")
  kCustom,     // a value computed here
  kSamples,    // a driver sample-buffer block (heading and five lines), -d only
  kProcesses,  // the process list (or "Processes : None")
};

struct Row {
  unsigned section = 0;
  std::uint8_t depth = 0;
  std::string_view label;
  Kind kind = Kind::kNotRead;
  std::string_view field;   // kField: the field's name
  std::string_view suffix;  // kField: appended to a value
  std::string (*custom)(const RowSource&) = nullptr;
  MetricSet needs;                             // kCustom: what it reads
  bool details = false;                        // kCustom: reads QGpu::details
  DriverBuffer buffer = DriverBuffer::kPower;  // kSamples: which
};

constexpr Row row(unsigned section, std::uint8_t depth, std::string_view label, Kind kind) {
  Row r;
  r.section = section;
  r.depth = depth;
  r.label = label;
  r.kind = kind;
  return r;
}
constexpr Row heading(unsigned s, std::uint8_t d, std::string_view label) {
  return row(s, d, label, Kind::kHeading);
}
constexpr Row not_read(unsigned s, std::uint8_t d, std::string_view label) {
  return row(s, d, label, Kind::kNotRead);
}
constexpr Row field(unsigned s, std::uint8_t d, std::string_view label, std::string_view name,
                    std::string_view suffix = {}) {
  Row r = row(s, d, label, Kind::kField);
  r.field = name;
  r.suffix = suffix;
  return r;
}
Row custom(unsigned s, std::uint8_t d, std::string_view label, std::string (*fn)(const RowSource&),
           MetricSet needs = {}) {
  Row r = row(s, d, label, Kind::kCustom);
  r.custom = fn;
  r.needs = needs;
  return r;
}
// A value of ReportDetails (what only this report shows).
Row detail(unsigned s, std::uint8_t d, std::string_view label,
           std::string (*fn)(const RowSource&)) {
  Row r = custom(s, d, label, fn);
  r.details = true;
  return r;
}
constexpr Row samples(unsigned s, std::string_view label, DriverBuffer b) {
  Row r = row(s, 1, label, Kind::kSamples);
  r.buffer = b;
  return r;
}

// --- computed values ----------------------------------------------------------------------

// nvmlDeviceGetDisplayMode's value, which nvidia-smi 580 shows here (display_mode itself it
// calls deprecated).
std::string display_attached(const RowSource& s) {
  return shown(s.gpu.device->display_mode, [](bool on) { return std::string(on ? "Yes" : "No"); });
}

// nvidia-smi's words for nvmlBrandType_t. Checked on the H200 (NVIDIA); the others are
// nvidia-smi's names as nvml.h documents the brands.
std::string product_brand(const RowSource& s) {
  return identity(s.gpu.device->brand, [](unsigned b) -> std::string {
    static constexpr std::array<std::string_view, 17> kNames = {"Unknown",
                                                                "Quadro",
                                                                "Tesla",
                                                                "NVS",
                                                                "GRID",
                                                                "GeForce",
                                                                "Titan",
                                                                "NVIDIA Virtual Applications",
                                                                "NVIDIA Virtual PC",
                                                                "NVIDIA Virtual Compute Server",
                                                                "NVIDIA RTX Virtual Workstation",
                                                                "NVIDIA Cloud Gaming",
                                                                "Quadro RTX",
                                                                "NVIDIA RTX",
                                                                "NVIDIA",
                                                                "GeForce RTX",
                                                                "Titan RTX"};
    return std::string(b < kNames.size() ? kNames[b] : "Unknown");
  });
}

// nvmlDeviceArchitecture_t by nvidia-smi's names (Hopper checked on the H200).
std::string product_architecture(const RowSource& s) {
  return identity(s.gpu.device->architecture, [](unsigned a) -> std::string {
    static constexpr std::array<std::string_view, 11> kNames = {
        "Unknown", "Unknown", "Kepler",       "Maxwell", "Pascal",   "Volta",
        "Turing",  "Ampere",  "Ada Lovelace", "Hopper",  "Blackwell"};
    return std::string(a < kNames.size() ? kNames[a] : "Unknown");
  });
}

std::string multi_gpu_board(const RowSource& s) {
  return identity(s.gpu.device->multi_gpu_board,
                  [](bool on) { return std::string(on ? "Yes" : "No"); });
}

std::string board_id(const RowSource& s) {
  return identity(s.gpu.device->board_id, [](unsigned id) { return fmt::format("0x{:x}", id); });
}

std::string board_part_number(const RowSource& s) {
  return identity(s.gpu.device->board_part_number, [](const std::string& v) { return v; });
}

std::string gsp_firmware_version(const RowSource& s) {
  return identity(s.gpu.device->gsp_firmware_version, [](const std::string& v) { return v; });
}

// nvmlGpuVirtualizationMode_t by nvidia-smi's names (Pass-Through checked on the H200 of a VM).
std::string virtualization_mode(const RowSource& s) {
  return identity(s.gpu.device->virtualization_mode, [](unsigned m) -> std::string {
    static constexpr std::array<std::string_view, 5> kNames = {"None", "Pass-Through", "VGPU",
                                                               "Host VGPU", "Host VSGA"};
    return std::string(m < kNames.size() ? kNames[m] : "Unknown");
  });
}

std::string minor_number(const RowSource& s) {
  return shown(s.gpu.device->minor_number, [](unsigned n) { return std::to_string(n); });
}

// One part of the PCI address, as nvidia-smi shows it: "0x00", "0x06", "0x0000".
template <int Part>
std::string pci_part(const RowSource& s) {
  return shown(s.gpu.device->pci_bus_id, [](const std::string& id) {
    const auto a = parse_pci_bus_id(id);
    if (!a) return std::string("N/A");
    if (Part == 0) return fmt::format("0x{:02X}", a->bus);
    if (Part == 1) return fmt::format("0x{:02X}", a->device);
    return fmt::format("0x{:04X}", a->domain);
  });
}

std::string count_text(const Reading<unsigned>& r) {
  return shown(r, [](unsigned n) { return std::to_string(n); });
}
std::string yes_no(const Reading<unsigned>& r) {
  return shown(r, [](unsigned n) { return std::string(n != 0 ? "Yes" : "No"); });
}
std::string replays(const RowSource& s) {
  return count_text(s.gpu.sample.pcie_replay_count);
}

// BAR1 in whole MiB as nvidia-smi 580 prints it on the H200: used cut down (1.3 MiB is 1), and
// free the whole MiB left (262144 - 1 = 262143), unlike the FB lines, which round up.
std::string mib_text(std::uint64_t mib) {
  return fmt::format("{} MiB", mib);
}
std::string bar1_total(const RowSource& s) {
  return shown(s.gpu.sample.bar1_total_bytes, [](std::uint64_t b) { return mib_text(b >> 20); });
}
std::string bar1_used(const RowSource& s) {
  return shown(s.gpu.sample.bar1_used_bytes, [](std::uint64_t b) { return mib_text(b >> 20); });
}
std::string bar1_free(const RowSource& s) {
  const DeviceSample& d = s.gpu.sample;
  if (!d.bar1_total_bytes) return missing_text(d.bar1_total_bytes.why());
  if (!d.bar1_used_bytes) return missing_text(d.bar1_used_bytes.why());
  const std::uint64_t total = *d.bar1_total_bytes >> 20, used = *d.bar1_used_bytes >> 20;
  return mib_text(total - std::min(total, used));
}

// A T.Limit threshold: degrees relative to T.Limit, signed ("-8 C").
template <Reading<int> DeviceStatic::*Threshold>
std::string tlimit(const RowSource& s) {
  return shown(s.gpu.device->*Threshold, [](int c) { return fmt::format("{} C", c); });
}

// NVML counts PCIe throughput in KB/s of 1024 bytes; gpumon keeps bytes per second.
std::string kb_per_s(const Reading<double>& bytes_per_s) {
  return shown(bytes_per_s, [](double b) { return fmt::format("{:.0f} KB/s", b / 1024.0); });
}
std::string pcie_tx(const RowSource& s) {
  return kb_per_s(s.gpu.pcie.tx_bytes_per_s);
}
std::string pcie_rx(const RowSource& s) {
  return kb_per_s(s.gpu.pcie.rx_bytes_per_s);
}

// nvidia-smi lists the display-clock reason, which has no --query-gpu field.
std::string display_clock_reason(const RowSource& s) {
  return shown(s.gpu.sample.clock_event_reasons, [](std::uint64_t mask) {
    return std::string((mask & kClockEventDisplayClockSetting) != 0 ? "Active" : "Not Active");
  });
}

std::string remapped_correctable(const RowSource& s) {
  return count_text(s.gpu.sample.remapped_rows_correctable);
}
std::string remapped_uncorrectable(const RowSource& s) {
  return count_text(s.gpu.sample.remapped_rows_uncorrectable);
}
std::string remap_pending(const RowSource& s) {
  return yes_no(s.gpu.sample.remapped_rows_pending);
}
std::string remap_failure(const RowSource& s) {
  return yes_no(s.gpu.sample.remapped_rows_failure);
}

// --- what only this report shows (ReportDetails): N/A where the GPU has no such thing ------

template <typename T>
std::string number_text(const Reading<T>& r, std::string_view unit = {}) {
  return identity(r, [&](T v) { return fmt::format("{}{}", v, unit); });
}
std::string flag_text(const Reading<bool>& r, std::string_view yes, std::string_view no) {
  return identity(r, [&](bool on) { return std::string(on ? yes : no); });
}
std::string mib_of(const Reading<std::uint64_t>& bytes) {
  return identity(bytes, [](std::uint64_t b) { return mib_text(b >> 20); });
}
std::string watts_text(const Reading<double>& w) {
  return identity(w, [](double v) { return fmt::format("{:.2f} W", v); });
}
const ReportDetails& details(const RowSource& s) {
  return s.gpu.details;
}

// nvidia-smi 580's words for nvmlDeviceGpuRecoveryAction_t 0-4 (a table in its binary).
std::string recovery_action(const RowSource& s) {
  return identity(details(s).recovery_action, [](unsigned a) {
    static constexpr std::array<std::string_view, 5> kWords = {"None", "Reset", "Reboot",
                                                               "Drain P2P", "Drain and Reset"};
    return std::string(a < kWords.size() ? kWords[a] : "Unknown");
  });
}

// The SRAM sources and the remap histogram: one struct per call, one line per member.
// With ECC off nvidia-smi shows every ECC count as N/A (a driver-550 capture); the driver may
// still answer the calls, with zeros.
bool ecc_off(const RowSource& s) {
  return s.gpu.device->ecc_enabled.has_value() && !*s.gpu.device->ecc_enabled;
}
template <std::uint64_t SramErrorSources::*Member>
std::string sram_source(const RowSource& s) {
  if (ecc_off(s)) return "N/A";
  return identity(details(s).sram_sources,
                  [](const SramErrorSources& v) { return std::to_string(v.*Member); });
}
template <unsigned RemapHistogram::*Member>
std::string banks(const RowSource& s) {
  return identity(details(s).remap_histogram,
                  [](const RemapHistogram& v) { return fmt::format("{} bank(s)", v.*Member); });
}
// A count of one of ReportDetails' groups (ECC split, encoder or FBC sessions).
template <auto Group, auto Member>
std::string group_count(const RowSource& s) {
  return number_text(details(s).*Group.*Member);
}
template <auto Scope, auto Member>
std::string ecc_count(const RowSource& s) {
  return ecc_off(s) ? "N/A" : group_count<Scope, Member>(s);
}

// nvidia-smi -q's order of lines for one GPU, and which -d section each belongs to. Lines of
// sections -d cannot choose (product, PCI, encoder stats, retired pages, fabric ...) are kept
// in the whole report so that its shape is nvidia-smi's.
std::vector<Row> make_layout() {
  constexpr unsigned W = kQWholeOnly, PERF = kQPerformance, MEM = kQMemory, UTIL = kQUtilization,
                     ECC = kQEcc, REMAP = kQRowRemapper, TEMP = kQTemperature, POW = kQPower,
                     CLK = kQClock;
  return {
      field(W, 1, "Product Name", "name"),
      custom(W, 1, "Product Brand", product_brand, G::kStaticDetails),
      custom(W, 1, "Product Architecture", product_architecture, G::kStaticDetails),
      field(W, 1, "Display Mode", "display_mode"),
      custom(W, 1, "Display Attached", display_attached),
      field(W, 1, "Display Active", "display_active"),
      field(W, 1, "Persistence Mode", "persistence_mode"),
      field(W, 1, "Addressing Mode", "addressing_mode"),
      heading(W, 1, "MIG Mode"),
      field(W, 2, "Current", "mig.mode.current"),
      field(W, 2, "Pending", "mig.mode.pending"),
      field(W, 1, "Accounting Mode", "accounting.mode"),
      field(W, 1, "Accounting Mode Buffer Size", "accounting.buffer_size"),
      heading(W, 1, "Driver Model"),
      not_read(W, 2, "Current"),
      not_read(W, 2, "Pending"),
      field(W, 1, "Serial Number", "serial"),
      field(W, 1, "GPU UUID", "uuid"),
      not_read(W, 1, "GPU PDI"),
      custom(W, 1, "Minor Number", minor_number),
      field(W, 1, "VBIOS Version", "vbios_version"),
      custom(W, 1, "MultiGPU Board", multi_gpu_board, G::kStaticDetails),
      custom(W, 1, "Board ID", board_id, G::kStaticDetails),
      custom(W, 1, "Board Part Number", board_part_number, G::kStaticDetails),
      not_read(W, 1, "GPU Part Number"),
      not_read(W, 1, "FRU Part Number"),
      heading(W, 1, "Platform Info"),
      not_read(W, 2, "Chassis Serial Number"),
      not_read(W, 2, "Slot Number"),
      not_read(W, 2, "Tray Index"),
      not_read(W, 2, "Host ID"),
      not_read(W, 2, "Peer Type"),
      field(W, 2, "Module Id", "platform.module_id"),
      not_read(W, 2, "GPU Fabric GUID"),
      heading(W, 1, "Inforom Version"),
      field(W, 2, "Image Version", "inforom.img"),
      field(W, 2, "OEM Object", "inforom.oem"),
      field(W, 2, "ECC Object", "inforom.ecc"),
      field(W, 2, "Power Management Object", "inforom.pwr"),
      heading(W, 1, "Inforom BBX Object Flush"),
      not_read(W, 2, "Latest Timestamp"),
      not_read(W, 2, "Latest Duration"),
      heading(W, 1, "GPU Operation Mode"),
      not_read(W, 2, "Current"),
      not_read(W, 2, "Pending"),
      detail(W, 1, "GPU C2C Mode",
             [](const RowSource& s) {
               return flag_text(details(s).c2c_enabled, "Enabled", "Disabled");
             }),
      heading(W, 1, "GPU Virtualization Mode"),
      custom(W, 2, "Virtualization Mode", virtualization_mode, G::kStaticDetails),
      not_read(W, 2, "Host VGPU Mode"),
      not_read(W, 2, "vGPU Heterogeneous Mode"),
      detail(W, 1, "GPU Recovery Action", recovery_action),
      custom(W, 1, "GSP Firmware Version", gsp_firmware_version, G::kStaticDetails),
      heading(W, 1, "IBMNPU"),
      not_read(W, 2, "Relaxed Ordering Mode"),
      heading(W, 1, "PCI"),
      custom(W, 2, "Bus", pci_part<0>),
      custom(W, 2, "Device", pci_part<1>),
      custom(W, 2, "Domain", pci_part<2>),
      field(W, 2, "Base Classcode", "pci.baseClass"),
      field(W, 2, "Sub Classcode", "pci.subClass"),
      field(W, 2, "Device Id", "pci.device_id"),
      field(W, 2, "Bus Id", "pci.bus_id"),
      field(W, 2, "Sub System Id", "pci.sub_device_id"),
      heading(W, 2, "GPU Link Info"),
      heading(W, 3, "PCIe Generation"),
      field(W, 4, "Max", "pcie.link.gen.max"),
      field(W, 4, "Current", "pcie.link.gen.current"),
      field(W, 4, "Device Current", "pcie.link.gen.gpucurrent"),
      field(W, 4, "Device Max", "pcie.link.gen.gpumax"),
      not_read(W, 4, "Host Max"),
      heading(W, 3, "Link Width"),
      field(W, 4, "Max", "pcie.link.width.max", "x"),
      field(W, 4, "Current", "pcie.link.width.current", "x"),
      heading(W, 2, "Bridge Chip"),
      not_read(W, 3, "Type"),
      not_read(W, 3, "Firmware"),
      custom(W, 2, "Replays Since Reset", replays, G::kPcieReplay),
      detail(W, 2, "Replay Number Rollovers",
             [](const RowSource& s) { return number_text(details(s).pcie_replay_rollovers); }),
      custom(W, 2, "Tx Throughput", pcie_tx),
      custom(W, 2, "Rx Throughput", pcie_rx),
      not_read(W, 2, "Atomic Caps Outbound"),
      not_read(W, 2, "Atomic Caps Inbound"),
      field(W, 1, "Fan Speed", "fan.speed"),
      field(PERF, 1, "Performance State", "pstate"),
      heading(PERF, 1, "Clocks Event Reasons"),
      field(PERF, 2, "Idle", "clocks_event_reasons.gpu_idle"),
      field(PERF, 2, "Applications Clocks Setting",
            "clocks_event_reasons.applications_clocks_setting"),
      field(PERF, 2, "SW Power Cap", "clocks_event_reasons.sw_power_cap"),
      field(PERF, 2, "HW Slowdown", "clocks_event_reasons.hw_slowdown"),
      field(PERF, 3, "HW Thermal Slowdown", "clocks_event_reasons.hw_thermal_slowdown"),
      field(PERF, 3, "HW Power Brake Slowdown", "clocks_event_reasons.hw_power_brake_slowdown"),
      field(PERF, 2, "Sync Boost", "clocks_event_reasons.sync_boost"),
      field(PERF, 2, "SW Thermal Slowdown", "clocks_event_reasons.sw_thermal_slowdown"),
      custom(PERF, 2, "Display Clock Setting", display_clock_reason, G::kClockEvents),
      heading(PERF, 1, "Clocks Event Reasons Counters"),
      field(PERF, 2, "SW Power Capping", "clocks_event_reasons_counters.sw_power_cap"),
      field(PERF, 2, "Sync Boost", "clocks_event_reasons_counters.sync_boost"),
      field(PERF, 2, "SW Thermal Slowdown", "clocks_event_reasons_counters.sw_thermal_slowdown"),
      field(PERF, 2, "HW Thermal Slowdown", "clocks_event_reasons_counters.hw_thermal_slowdown"),
      field(PERF, 2, "HW Power Braking", "clocks_event_reasons_counters.hw_power_brake_slowdown"),
      not_read(PERF, 1, "Sparse Operation Mode"),
      heading(MEM, 1, "FB Memory Usage"),
      field(MEM, 2, "Total", "memory.total"),
      field(MEM, 2, "Reserved", "memory.reserved"),
      field(MEM, 2, "Used", "memory.used"),
      field(MEM, 2, "Free", "memory.free"),
      heading(MEM, 1, "BAR1 Memory Usage"),
      custom(MEM, 2, "Total", bar1_total, G::kBar1Memory),
      custom(MEM, 2, "Used", bar1_used, G::kBar1Memory),
      custom(MEM, 2, "Free", bar1_free, G::kBar1Memory),
      heading(MEM, 1, "Conf Compute Protected Memory Usage"),
      detail(MEM, 2, "Total",
             [](const RowSource& s) { return mib_of(details(s).protected_memory_total_bytes); }),
      detail(MEM, 2, "Used",
             [](const RowSource& s) { return mib_of(details(s).protected_memory_used_bytes); }),
      detail(MEM, 2, "Free",
             [](const RowSource& s) { return mib_of(details(s).protected_memory_free_bytes); }),
      field(kQCompute, 1, "Compute Mode", "compute_mode"),
      heading(UTIL, 1, "Utilization"),
      field(UTIL, 2, "GPU", "utilization.gpu"),
      field(UTIL, 2, "Memory", "utilization.memory"),
      field(UTIL, 2, "Encoder", "utilization.encoder"),
      field(UTIL, 2, "Decoder", "utilization.decoder"),
      field(UTIL, 2, "JPEG", "utilization.jpeg"),
      field(UTIL, 2, "OFA", "utilization.ofa"),
      samples(UTIL, "GPU Utilization Samples", DriverBuffer::kGpuUtilization),
      samples(UTIL, "Memory Utilization Samples", DriverBuffer::kMemoryUtilization),
      samples(UTIL, "ENC Utilization Samples", DriverBuffer::kEncoderUtilization),
      samples(UTIL, "DEC Utilization Samples", DriverBuffer::kDecoderUtilization),
      samples(UTIL, "JPG Utilization Samples", DriverBuffer::kJpegUtilization),
      samples(UTIL, "OFA Utilization Samples", DriverBuffer::kOfaUtilization),
      heading(W, 1, "Encoder Stats"),
      detail(W, 2, "Active Sessions", group_count<&ReportDetails::encoder, &CodecSessions::count>),
      detail(W, 2, "Average FPS",
             group_count<&ReportDetails::encoder, &CodecSessions::average_fps>),
      detail(W, 2, "Average Latency",
             group_count<&ReportDetails::encoder, &CodecSessions::average_latency_us>),
      heading(W, 1, "FBC Stats"),
      detail(W, 2, "Active Sessions", group_count<&ReportDetails::fbc, &CodecSessions::count>),
      detail(W, 2, "Average FPS", group_count<&ReportDetails::fbc, &CodecSessions::average_fps>),
      detail(W, 2, "Average Latency",
             group_count<&ReportDetails::fbc, &CodecSessions::average_latency_us>),
      heading(W, 1, "DRAM Encryption Mode"),
      not_read(W, 2, "Current"),
      not_read(W, 2, "Pending"),
      heading(ECC, 1, "ECC Mode"),
      field(ECC, 2, "Current", "ecc.mode.current"),
      field(ECC, 2, "Pending", "ecc.mode.pending"),
      heading(ECC, 1, "ECC Errors"),
      heading(ECC, 2, "Volatile"),
      detail(ECC, 3, "SRAM Correctable",
             ecc_count<&ReportDetails::ecc_volatile, &EccSplit::sram_corrected>),
      detail(ECC, 3, "SRAM Uncorrectable Parity",
             ecc_count<&ReportDetails::ecc_volatile, &EccSplit::sram_uncorrected_parity>),
      detail(ECC, 3, "SRAM Uncorrectable SEC-DED",
             ecc_count<&ReportDetails::ecc_volatile, &EccSplit::sram_uncorrected_secded>),
      detail(ECC, 3, "DRAM Correctable",
             ecc_count<&ReportDetails::ecc_volatile, &EccSplit::dram_corrected>),
      detail(ECC, 3, "DRAM Uncorrectable",
             ecc_count<&ReportDetails::ecc_volatile, &EccSplit::dram_uncorrected>),
      heading(ECC, 2, "Aggregate"),
      detail(ECC, 3, "SRAM Correctable",
             ecc_count<&ReportDetails::ecc_aggregate, &EccSplit::sram_corrected>),
      detail(ECC, 3, "SRAM Uncorrectable Parity",
             ecc_count<&ReportDetails::ecc_aggregate, &EccSplit::sram_uncorrected_parity>),
      detail(ECC, 3, "SRAM Uncorrectable SEC-DED",
             ecc_count<&ReportDetails::ecc_aggregate, &EccSplit::sram_uncorrected_secded>),
      detail(ECC, 3, "DRAM Correctable",
             ecc_count<&ReportDetails::ecc_aggregate, &EccSplit::dram_corrected>),
      detail(ECC, 3, "DRAM Uncorrectable",
             ecc_count<&ReportDetails::ecc_aggregate, &EccSplit::dram_uncorrected>),
      detail(ECC, 3, "SRAM Threshold Exceeded",
             [](const RowSource& s) {
               return ecc_off(s) ? "N/A"
                                 : flag_text(details(s).sram_threshold_exceeded, "Yes", "No");
             }),
      heading(ECC, 2, "Aggregate Uncorrectable SRAM Sources"),
      detail(ECC, 3, "SRAM L2", sram_source<&SramErrorSources::l2>),
      detail(ECC, 3, "SRAM SM", sram_source<&SramErrorSources::sm>),
      detail(ECC, 3, "SRAM Microcontroller", sram_source<&SramErrorSources::microcontroller>),
      detail(ECC, 3, "SRAM PCIE", sram_source<&SramErrorSources::pcie>),
      detail(ECC, 3, "SRAM Other", sram_source<&SramErrorSources::other>),
      detail(ECC, 2, "Channel Repair Pending",
             [](const RowSource& s) {
               return flag_text(details(s).channel_repair_pending, "Yes", "No");
             }),
      detail(
          ECC, 2, "TPC Repair Pending",
          [](const RowSource& s) { return flag_text(details(s).tpc_repair_pending, "Yes", "No"); }),
      detail(ECC, 2, "Unrepairable Memory",
             [](const RowSource& s) {
               return flag_text(details(s).unrepairable_memory, "Yes", "No");
             }),
      heading(W, 1, "Retired Pages"),
      not_read(W, 2, "Single Bit ECC"),
      not_read(W, 2, "Double Bit ECC"),
      not_read(W, 2, "Pending Page Blacklist"),
      heading(REMAP, 1, "Remapped Rows"),
      custom(REMAP, 2, "Correctable Error", remapped_correctable, G::kRemappedRows),
      detail(REMAP, 2, "Inactive Correctable Error",
             [](const RowSource& s) {
               return number_text(details(s).remapped_rows_correctable_inactive);
             }),
      custom(REMAP, 2, "Uncorrectable Error", remapped_uncorrectable, G::kRemappedRows),
      detail(REMAP, 2, "Inactive Uncorrectable Error",
             [](const RowSource& s) {
               return number_text(details(s).remapped_rows_uncorrectable_inactive);
             }),
      custom(REMAP, 2, "Pending", remap_pending, G::kRemappedRows),
      custom(REMAP, 2, "Remapping Failure Occurred", remap_failure, G::kRemappedRows),
      heading(REMAP, 2, "Bank Remap Availability Histogram"),
      detail(REMAP, 3, "Max", banks<&RemapHistogram::max>),
      detail(REMAP, 3, "High", banks<&RemapHistogram::high>),
      detail(REMAP, 3, "Partial", banks<&RemapHistogram::partial>),
      detail(REMAP, 3, "Low", banks<&RemapHistogram::low>),
      detail(REMAP, 3, "None", banks<&RemapHistogram::none>),
      heading(TEMP, 1, "Temperature"),
      field(TEMP, 2, "GPU Current Temp", "temperature.gpu", " C"),
      field(TEMP, 2, "GPU T.Limit Temp", "temperature.gpu.tlimit", " C"),
      custom(TEMP, 2, "GPU Shutdown T.Limit Temp", tlimit<&DeviceStatic::tlimit_shutdown_c>,
             G::kStaticDetails),
      custom(TEMP, 2, "GPU Slowdown T.Limit Temp", tlimit<&DeviceStatic::tlimit_slowdown_c>,
             G::kStaticDetails),
      custom(TEMP, 2, "GPU Max Operating T.Limit Temp", tlimit<&DeviceStatic::tlimit_gpu_max_c>,
             G::kStaticDetails),
      not_read(TEMP, 2, "GPU Target Temperature"),
      field(TEMP, 2, "Memory Current Temp", "temperature.memory", " C"),
      custom(TEMP, 2, "Memory Max Operating T.Limit Temp", tlimit<&DeviceStatic::tlimit_mem_max_c>,
             G::kStaticDetails),
      heading(POW, 1, "GPU Power Readings"),
      field(POW, 2, "Average Power Draw", "power.draw.average"),
      field(POW, 2, "Instantaneous Power Draw", "power.draw.instant"),
      field(POW, 2, "Current Power Limit", "enforced.power.limit"),
      field(POW, 2, "Requested Power Limit", "power.limit"),
      field(POW, 2, "Default Power Limit", "power.default_limit"),
      field(POW, 2, "Min Power Limit", "power.min_limit"),
      field(POW, 2, "Max Power Limit", "power.max_limit"),
      samples(POW, "Power Samples", DriverBuffer::kPower),
      heading(POW, 1, "GPU Memory Power Readings "),  // nvidia-smi's trailing space
      detail(POW, 2, "Average Power Draw",
             [](const RowSource& s) { return watts_text(details(s).memory_power_average_w); }),
      detail(POW, 2, "Instantaneous Power Draw",
             [](const RowSource& s) { return watts_text(details(s).memory_power_instant_w); }),
      heading(POW, 1, "Module Power Readings"),
      not_read(POW, 2, "Average Power Draw"),
      not_read(POW, 2, "Instantaneous Power Draw"),
      not_read(POW, 2, "Current Power Limit"),
      not_read(POW, 2, "Requested Power Limit"),
      not_read(POW, 2, "Default Power Limit"),
      not_read(POW, 2, "Min Power Limit"),
      not_read(POW, 2, "Max Power Limit"),
      not_read(W, 1, "Power Smoothing"),
      heading(W, 1, "Workload Power Profiles"),
      not_read(W, 2, "Requested Profiles"),
      not_read(W, 2, "Enforced Profiles"),
      heading(CLK, 1, "Clocks"),
      field(CLK, 2, "Graphics", "clocks.current.graphics"),
      field(CLK, 2, "SM", "clocks.current.sm"),
      field(CLK, 2, "Memory", "clocks.current.memory"),
      detail(CLK, 2, "Video",
             [](const RowSource& s) { return number_text(details(s).video_clock_mhz, " MHz"); }),
      heading(CLK, 1, "Applications Clocks"),
      field(CLK, 2, "Graphics", "clocks.applications.graphics"),
      field(CLK, 2, "Memory", "clocks.applications.memory"),
      heading(CLK, 1, "Default Applications Clocks"),
      field(CLK, 2, "Graphics", "clocks.default_applications.graphics"),
      field(CLK, 2, "Memory", "clocks.default_applications.memory"),
      heading(CLK, 1, "Deferred Clocks"),
      not_read(CLK, 2, "Memory"),
      heading(CLK, 1, "Max Clocks"),
      field(CLK, 2, "Graphics", "clocks.max.graphics"),
      field(CLK, 2, "SM", "clocks.max.sm"),
      field(CLK, 2, "Memory", "clocks.max.memory"),
      detail(
          CLK, 2, "Video",
          [](const RowSource& s) { return number_text(details(s).max_video_clock_mhz, " MHz"); }),
      heading(CLK, 1, "Max Customer Boost Clocks"),
      detail(CLK, 2, "Graphics",
             [](const RowSource& s) {
               return number_text(details(s).customer_boost_max_graphics_mhz, " MHz");
             }),
      samples(CLK, "SM Clock Samples", DriverBuffer::kSmClock),
      samples(CLK, "Memory Clock Samples", DriverBuffer::kMemoryClock),
      heading(CLK, 1, "Clock Policy"),
      not_read(CLK, 2, "Auto Boost"),
      not_read(CLK, 2, "Auto Boost Default"),
      heading(W, 1, "Fabric"),
      not_read(W, 2, "State"),
      not_read(W, 2, "Status"),
      not_read(W, 2, "CliqueId"),
      not_read(W, 2, "ClusterUUID"),
      heading(W, 2, "Health"),
      not_read(W, 3, "Summary"),
      not_read(W, 3, "Bandwidth"),
      not_read(W, 3, "Route Recovery in progress"),
      not_read(W, 3, "Route Unhealthy"),
      not_read(W, 3, "Access Timeout Recovery"),
      not_read(W, 3, "Incorrect Configuration"),
      not_read(W, 3, "Partition Assigned"),
      row(kQPids, 1, "Processes", Kind::kProcesses),
      heading(W, 1, "Capabilities"),
      detail(W, 2, "EGM",
             [](const RowSource& s) {
               return flag_text(details(s).egm_enabled, "enabled", "disabled");
             }),
  };
}

const std::vector<Row>& layout() {
  static const std::vector<Row> kLayout = make_layout();
  return kLayout;
}

bool shows(const Row& row, unsigned display) {
  if (display == 0) return row.kind != Kind::kSamples;  // the blocks -d adds
  return (row.section & display) != 0;
}

const GpuField& field_of(std::string_view name) {
  const GpuField* f = find_field(gpu_fields(), name);
  if (f == nullptr) std::abort();  // the layout names a field the registry lacks: a code error
  return *f;
}

// "    Label<spaces>: value", the colon in column `width` (55 for nvidia-smi's GPU lines, 42 in
// its process list).
void put_line(std::string& out, unsigned depth, std::string_view label, std::string_view value,
              std::size_t width = 55) {
  std::string line(4 * depth, ' ');
  line += label;
  if (line.size() < width) line.resize(width, ' ');
  out += line;
  out += ": ";
  out += value;
  out += '\n';
}

void put_heading(std::string& out, unsigned depth, std::string_view label) {
  out += std::string(4 * depth, ' ');
  out += label;
  out += '\n';
}

std::string field_value(const Row& row, const RowSource& s) {
  const GpuField& f = field_of(row.field);
  const Cell cell = f.extract(s.fields);
  if (!cell.has_value()) {
    return missing_text(cell.why() == Missing::kNotSupported && f.info.not_supported_reads_na
                            ? Missing::kNotAvailable
                            : cell.why());
  }
  return csv_cell(cell, f.info, true) + std::string(row.suffix);
}

// Duration, count, max, min and mean of one of the driver's buffers, as nvidia-smi prints them:
// N/A where the GPU has no such buffer, and NVML's "Not Found" where the buffer holds no sample
// (an idle H200's clock buffers), or none newer than the previous report's under -l.
void put_samples(std::string& out, const Row& row, const QGpu& gpu) {
  put_heading(out, 1, row.label);
  const Reading<DriverSamples>& buffer = gpu.buffer(row.buffer);
  static constexpr std::array<std::string_view, 5> kLabels = {"Duration", "Number of Samples",
                                                              "Max", "Min", "Avg"};
  if (!buffer || buffer->samples.empty()) {
    const std::string text = buffer ? "Not Found" : na_or_why(buffer.why());
    for (std::string_view label : kLabels) put_line(out, 2, label, text);
    return;
  }
  const std::vector<DriverSample>& v = buffer->samples;
  double lo = v.front().value, hi = lo, sum = 0;
  for (const DriverSample& x : v) {
    lo = std::min(lo, x.value);
    hi = std::max(hi, x.value);
    sum += x.value;
  }
  const double mean = sum / static_cast<double>(v.size());
  const double seconds = static_cast<double>(v.back().timestamp_us - v.front().timestamp_us) / 1e6;
  const bool watts = row.buffer == DriverBuffer::kPower;
  const bool mhz = row.buffer == DriverBuffer::kSmClock || row.buffer == DriverBuffer::kMemoryClock;
  // Utilization is whole percent; nvidia-smi's average is the integer mean.
  auto value = [&](double x, bool mean_of_integers) {
    if (watts) return fmt::format("{:.2f} W", x);
    return fmt::format("{} {}", mean_of_integers ? std::floor(x) : std::round(x),
                       mhz ? "MHz" : "%");
  };
  put_line(out, 2, kLabels[0], fmt::format("{:.2f} sec", seconds));
  put_line(out, 2, kLabels[1], std::to_string(v.size()));
  put_line(out, 2, kLabels[2], value(hi, false));
  put_line(out, 2, kLabels[3], value(lo, false));
  put_line(out, 2, kLabels[4], value(mean, true));
}

void put_processes(std::string& out, const QGpu& gpu) {
  if (!gpu.processes.has_value()) {
    put_line(out, 1, "Processes", missing_text(gpu.processes.why()));
    return;
  }
  if (gpu.processes->empty()) {
    put_line(out, 1, "Processes", "None");
    return;
  }
  const FieldInfo& memory = find_field(app_fields(), "used_gpu_memory")->info;
  put_heading(out, 1, "Processes");
  for (const GpuProcess& p : *gpu.processes) {
    auto id = [](const Reading<unsigned>& r) {
      return shown(r, [](unsigned n) { return std::to_string(n); });
    };
    put_line(out, 2, "GPU instance ID", id(p.gpu_instance_id), 42);
    put_line(out, 2, "Compute instance ID", id(p.compute_instance_id), 42);
    put_line(out, 2, "Process ID", std::to_string(p.pid), 42);
    put_line(out, 3, "Type", "C", 42);
    put_line(out, 3, "Name", p.name.value_or("N/A"), 42);
    put_line(out, 3, "Used GPU Memory",
             p.used_memory_bytes.has_value()
                 ? csv_cell(Cell(Scalar(*p.used_memory_bytes)), memory, true)
                 : missing_text(p.used_memory_bytes.why()),
             42);
  }
}

// "Thu Dec  3 05:23:43 2026", in English whatever the locale.
std::string report_time(const std::tm& t) {
  static constexpr std::array<std::string_view, 7> kDays = {"Sun", "Mon", "Tue", "Wed",
                                                            "Thu", "Fri", "Sat"};
  static constexpr std::array<std::string_view, 12> kMonths = {
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  return fmt::format("{} {} {:2} {:02}:{:02}:{:02} {}", kDays.at(t.tm_wday % 7),
                     kMonths.at(t.tm_mon % 12), t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec,
                     t.tm_year + 1900);
}

}  // namespace

Expected<unsigned> parse_q_display(std::string_view list) {
  static constexpr std::array<std::pair<std::string_view, unsigned>, 10> kNames = {{
      {"MEMORY", kQMemory},
      {"UTILIZATION", kQUtilization},
      {"ECC", kQEcc},
      {"TEMPERATURE", kQTemperature},
      {"POWER", kQPower},
      {"CLOCK", kQClock},
      {"COMPUTE", kQCompute},
      {"PIDS", kQPids},
      {"PERFORMANCE", kQPerformance},
      {"ROW_REMAPPER", kQRowRemapper},
  }};
  unsigned display = 0;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view name = list.substr(start, comma - start);
    const auto* it =
        std::find_if(kNames.begin(), kNames.end(), [&](const auto& n) { return n.first == name; });
    if (it == kNames.end()) {
      std::string known;
      for (const auto& n : kNames) known += (known.empty() ? "" : ",") + std::string(n.first);
      return usage_error("-d: '" + std::string(name) +
                         "' is not a section gpumon shows; choose from " + known + ".");
    }
    display |= it->second;
    start = comma + 1;
  }
  return display;
}

MetricSet q_metrics(unsigned display) {
  MetricSet m;
  for (const Row& row : layout()) {
    if (!shows(row, display)) continue;
    if (row.kind == Kind::kField) m |= field_of(row.field).needs;
    if (row.kind == Kind::kCustom) m |= row.needs;
  }
  return m;
}

bool q_needs_pcie(unsigned display) {
  return display == 0;
}
bool q_needs_processes(unsigned display) {
  return display == 0 || (display & kQPids) != 0;
}
bool q_needs_report_details(unsigned display) {
  const auto& rows = layout();
  return std::any_of(rows.begin(), rows.end(),
                     [&](const Row& row) { return row.details && shows(row, display); });
}
std::vector<DriverBuffer> q_buffers(unsigned display) {
  std::vector<DriverBuffer> out;
  for (const Row& row : layout()) {
    if (row.kind == Kind::kSamples && shows(row, display)) out.push_back(row.buffer);
  }
  return out;
}

std::string q_report(const QHeader& header, const std::vector<QGpu>& gpus, unsigned display) {
  const SystemInfo& sys = *header.system;
  std::string out = "\n==============NVSMI LOG==============\n\n";
  put_line(out, 0, "Timestamp", report_time(header.local));
  put_line(out, 0, "Driver Version",
           shown(sys.driver_version, [](const std::string& v) { return v; }));
  put_line(out, 0, "CUDA Version", shown(sys.cuda_driver_version, cuda_version_text));
  out += '\n';
  put_line(out, 0, "Attached GPUs", std::to_string(header.attached));
  for (const QGpu& gpu : gpus) {
    const RowSource s{gpu, GpuRowSource{sys, *gpu.device, gpu.sample, header.attached}};
    out += "GPU " + gpu.device->pci_bus_id.value_or("N/A") + "\n";
    for (const Row& row : layout()) {
      if (!shows(row, display)) continue;
      switch (row.kind) {
        case Kind::kHeading: put_heading(out, row.depth, row.label); break;
        case Kind::kNotRead: put_line(out, row.depth, row.label, "N/A"); break;
        case Kind::kField: put_line(out, row.depth, row.label, field_value(row, s)); break;
        case Kind::kCustom: put_line(out, row.depth, row.label, row.custom(s)); break;
        case Kind::kSamples: put_samples(out, row, gpu); break;
        case Kind::kProcesses: put_processes(out, gpu); break;
      }
    }
    out += '\n';
  }
  return out;
}

}  // namespace gpumon::query
