// SPDX-License-Identifier: MIT
#include "sampler/sample_errors.h"

namespace gpumon {
namespace {

template <typename... R>
std::uint64_t errors_in(const R&... readings) {
  return (std::uint64_t{0} + ... +
          static_cast<std::uint64_t>(!readings.has_value() && readings.why() == Missing::kError));
}

}  // namespace

std::uint64_t count_errors(const DeviceSample& s) {
  return errors_in(s.utilization_gpu_pct, s.utilization_memory_pct, s.memory_total_bytes,
                   s.memory_reserved_bytes, s.memory_used_bytes, s.memory_free_bytes,
                   s.temperature_gpu_c, s.temperature_memory_c, s.power_draw_w,
                   s.power_draw_instant_w, s.power_limit_w, s.energy_mj, s.sm_clock_mhz,
                   s.mem_clock_mhz, s.graphics_clock_mhz, s.pstate, s.fan_speed_pct,
                   s.clock_event_reasons, s.ecc_corrected_volatile, s.ecc_uncorrected_volatile,
                   s.sm_active_ratio, s.sm_occupancy_ratio, s.tensor_active_ratio,
                   s.dram_bw_util_ratio, s.gpm_window_s, s.power_max_w, s.utilization_gpu_max_pct,
                   s.pcie_tx_bytes_per_s, s.pcie_rx_bytes_per_s);
}

}  // namespace gpumon
