// SPDX-License-Identifier: MIT
#include "gpu/gpu_backend.h"

namespace gpumon {

ReportDetails report_details_missing(Missing why) {
  ReportDetails r;
  auto set = [why](auto&... readings) {
    ((readings = std::decay_t<decltype(readings)>::missing(why)), ...);
  };
  auto sessions = [&](CodecSessions& s) { set(s.count, s.average_fps, s.average_latency_us); };
  auto split = [&](EccSplit& e) {
    set(e.sram_corrected, e.sram_uncorrected_parity, e.sram_uncorrected_secded, e.dram_corrected,
        e.dram_uncorrected);
  };
  set(r.video_clock_mhz, r.max_video_clock_mhz, r.customer_boost_max_graphics_mhz,
      r.pcie_replay_rollovers, r.c2c_enabled, r.recovery_action, r.sram_threshold_exceeded,
      r.sram_sources, r.channel_repair_pending, r.tpc_repair_pending, r.unrepairable_memory,
      r.remapped_rows_correctable_inactive, r.remapped_rows_uncorrectable_inactive,
      r.remap_histogram, r.memory_power_average_w, r.memory_power_instant_w,
      r.protected_memory_total_bytes, r.protected_memory_used_bytes, r.protected_memory_free_bytes,
      r.egm_enabled);
  sessions(r.encoder);
  sessions(r.fbc);
  split(r.ecc_volatile);
  split(r.ecc_aggregate);
  return r;
}

ReportDetails GpuBackend::report_details(unsigned index) {
  (void)index;
  return report_details_missing(Missing::kNotSupported);
}

}  // namespace gpumon
