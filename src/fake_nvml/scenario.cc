// SPDX-License-Identifier: MIT
#include "fake_nvml/scenario.h"

#include <array>

namespace gpumon::fake {
namespace {

constexpr std::array<std::string_view, kFieldCount> kFieldNames = {
    "utilization_gpu_pct",
    "utilization_memory_pct",
    "memory_used_bytes",
    "temperature_gpu_c",
    "temperature_memory_c",
    "power_draw_mw",
    "power_instant_mw",
    "power_limit_mw",
    "energy_mj",
    "sm_clock_mhz",
    "mem_clock_mhz",
    "graphics_clock_mhz",
    "pstate",
    "fan_speed_pct",
    "clock_event_reasons",
    "ecc_corrected_volatile",
    "ecc_uncorrected_volatile",
    "sm_active_pct",
    "sm_occupancy_pct",
    "tensor_active_pct",
    "dram_bw_util_pct",
    "pcie_tx_kb_per_s",
    "pcie_rx_kb_per_s",
    "power_average_mw",
    "encoder_util_pct",
    "decoder_util_pct",
    "pcie_link_gen",
    "pcie_link_width",
    "pcie_replay_count",
    "remapped_rows_correctable",
    "remapped_rows_uncorrectable",
    "remapped_rows_pending",
    "remapped_rows_failure",
    "nvlink_data_tx_kib",
    "nvlink_data_rx_kib",
    "jpeg_util_pct",
    "ofa_util_pct",
    "gr_engine_active_pct",
    "name",
    "uuid",
    "serial",
    "pci_info",
    "minor_number",
    "persistence_mode",
    "ecc_mode",
    "max_clocks",
    "processes",
    "samples",
    "events",
    "process_utilization",
    "vbios_version",
    "compute_mode",
    "mig_mode",
    "pcie_link",
    "inforom_image",
    "display_active",
    "accounting_mode",
    "display_mode",
    "power_limits",
    "applications_clocks",
    "power_cap_time",
    "sync_boost_time",
    "slowdown_time",
    "temperature_limits",
    "bar1_memory",
    "board_identity",
    "gsp_firmware",
    "virtualization_mode",
    "addressing_mode",
    "pci_class",
    "accounting_buffer_size",
    "inforom_objects",
    "report_details",
};

}  // namespace

std::string_view field_name(Field f) {
  return kFieldNames.at(static_cast<std::size_t>(f));
}

std::optional<Field> field_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kFieldNames.size(); ++i) {
    if (kFieldNames[i] == name) return static_cast<Field>(i);
  }
  return std::nullopt;
}

bool is_code_field(Field f) {
  return f == Field::kPstate || f == Field::kClockEventReasons;
}

}  // namespace gpumon::fake
