// SPDX-License-Identifier: MIT
// NvmlBackend::report_details: the values only nvidia-smi -q shows, read with the calls
// nvidia-smi 580 makes for them (traced on an H200: docs/results/h200-2026-12-04-nvml-trace).
#include "gpu/nvml_backend.h"
#include "gpu/nvml_values.h"

namespace gpumon {

ReportDetails NvmlBackend::report_details(unsigned index) {
  Device& d = devices_.at(index);
  if (const auto why = unavailable(d)) return report_details_missing(*why);
  const auto& fn = lib_->fn();
  nvmlDevice_t h = d.handle;
  // One call: its status, with a missing entry point NOT_SUPPORTED, a struct version the driver
  // does not take NOT_SUPPORTED (it will not take it next time either), and nothing asked of a
  // GPU found lost by an earlier call.
  auto ask = [&](auto fnptr, auto... args) -> nvmlReturn_t {
    if (d.lost) return NVML_ERROR_GPU_IS_LOST;
    if (fnptr == nullptr) return NVML_ERROR_NOT_SUPPORTED;
    const nvmlReturn_t rc = fnptr(h, args...);
    if (rc == NVML_ERROR_ARGUMENT_VERSION_MISMATCH) return NVML_ERROR_NOT_SUPPORTED;
    if (rc != NVML_SUCCESS) extra_failure(d, rc);
    return rc;
  };
  auto reading = [](nvmlReturn_t rc, auto value) {
    using R = Reading<decltype(value)>;
    return rc == NVML_SUCCESS ? R(value) : R::missing(missing_from(rc));
  };
  ReportDetails r;

  unsigned mhz = 0;
  nvmlReturn_t rc = ask(fn.device_get_clock_info, NVML_CLOCK_VIDEO, &mhz);
  r.video_clock_mhz = reading(rc, mhz);
  rc = ask(fn.device_get_max_clock_info, NVML_CLOCK_VIDEO, &mhz);
  r.max_video_clock_mhz = reading(rc, mhz);
  rc = ask(fn.device_get_clock, NVML_CLOCK_GRAPHICS, nvml::kClockIdCustomerBoostMax, &mhz);
  r.customer_boost_max_graphics_mhz = reading(rc, mhz);

  unsigned sessions = 0, fps = 0, latency_us = 0;
  rc = ask(fn.device_get_encoder_stats, &sessions, &fps, &latency_us);
  r.encoder = {reading(rc, sessions), reading(rc, fps), reading(rc, latency_us)};
  nvmlFBCStats_t fbc{};
  rc = ask(fn.device_get_fbc_stats, &fbc);
  r.fbc = {reading(rc, fbc.sessionsCount), reading(rc, fbc.averageFPS),
           reading(rc, fbc.averageLatency)};

  nvmlC2cModeInfo_v1_t c2c{};
  rc = ask(fn.device_get_c2c_mode_info, &c2c);
  r.c2c_enabled = reading(rc, c2c.isC2cEnabled != 0);

  // ECC: the SRAM status (parity and SEC-DED, the threshold, where), and the corrected SRAM
  // and the DRAM counts by location, as nvidia-smi reads them (it never subtracts totals).
  nvmlEccSramErrorStatus_v1_t sram{};
  sram.version = nvml::kEccSramErrorStatusV1;
  rc = ask(fn.device_get_sram_ecc_error_status, &sram);
  r.ecc_volatile.sram_uncorrected_parity = reading(rc, std::uint64_t{sram.volatileUncParity});
  r.ecc_volatile.sram_uncorrected_secded = reading(rc, std::uint64_t{sram.volatileUncSecDed});
  r.ecc_aggregate.sram_uncorrected_parity = reading(rc, std::uint64_t{sram.aggregateUncParity});
  r.ecc_aggregate.sram_uncorrected_secded = reading(rc, std::uint64_t{sram.aggregateUncSecDed});
  r.sram_threshold_exceeded = reading(rc, sram.bThresholdExceeded != 0);
  r.sram_sources =
      reading(rc, SramErrorSources{sram.aggregateUncBucketL2, sram.aggregateUncBucketSm,
                                   sram.aggregateUncBucketMcu, sram.aggregateUncBucketPcie,
                                   sram.aggregateUncBucketOther});
  auto counter = [&](nvmlMemoryErrorType_t type, nvmlEccCounterType_t scope, unsigned where) {
    unsigned long long n = 0;
    const nvmlReturn_t c = ask(fn.device_get_memory_error_counter, type, scope, where, &n);
    return reading(c, std::uint64_t{n});
  };
  for (const auto& [split, scope] : {std::pair{&r.ecc_volatile, NVML_VOLATILE_ECC},
                                     std::pair{&r.ecc_aggregate, NVML_AGGREGATE_ECC}}) {
    split->sram_corrected =
        counter(NVML_MEMORY_ERROR_TYPE_CORRECTED, scope, nvml::kMemoryLocationSram);
    split->dram_corrected =
        counter(NVML_MEMORY_ERROR_TYPE_CORRECTED, scope, nvml::kMemoryLocationDram);
    split->dram_uncorrected =
        counter(NVML_MEMORY_ERROR_TYPE_UNCORRECTED, scope, nvml::kMemoryLocationDram);
  }
  nvmlRepairStatus_v1_t repair{};
  repair.version = nvml::kRepairStatusV1;
  rc = ask(fn.device_get_repair_status, &repair);
  r.channel_repair_pending = reading(rc, repair.bChannelRepairPending != 0);
  r.tpc_repair_pending = reading(rc, repair.bTpcRepairPending != 0);
  nvmlUnrepairableMemoryStatus_v1_t unrepairable{};
  rc = ask(fn.device_get_unrepairable_memory_flag, &unrepairable);
  r.unrepairable_memory = reading(rc, unrepairable.bUnrepairableMemory != 0);

  nvmlRemappedRowsInfo_v2_t rows{};
  rc = ask(fn.device_get_remapped_rows_v2, &rows);
  r.remapped_rows_correctable_inactive = reading(rc, rows.corrInactiveRemaps);
  r.remapped_rows_uncorrectable_inactive = reading(rc, rows.uncInactiveRemaps);
  nvmlRowRemapperHistogramValues_t histogram{};
  rc = ask(fn.device_get_row_remapper_histogram, &histogram);
  r.remap_histogram = reading(rc, RemapHistogram{histogram.max, histogram.high, histogram.partial,
                                                 histogram.low, histogram.none});

  nvmlMemory_t prot{};
  rc = ask(fn.device_get_conf_compute_protected_memory_usage, &prot);
  r.protected_memory_total_bytes = reading(rc, std::uint64_t{prot.total});
  r.protected_memory_used_bytes = reading(rc, std::uint64_t{prot.used});
  r.protected_memory_free_bytes = reading(rc, std::uint64_t{prot.free});
  nvmlDeviceCapabilities_v1_t caps{};
  caps.version = nvml::kDeviceCapabilitiesV1;
  rc = ask(fn.device_get_capabilities, &caps);
  r.egm_enabled = reading(rc, (caps.capMask & nvml::kDevCapEgm) != 0);

  // The field values, in one call; each answers for itself.
  std::array<nvmlFieldValue_t, 4> fields{};
  fields[0].fieldId = nvml::kFiDevPcieReplayRolloverCounter;
  fields[1].fieldId = nvml::kFiDevGpuRecoveryAction;
  fields[2].fieldId = nvml::kFiDevPowerAverage;
  fields[2].scopeId = nvml::kPowerScopeMemory;
  fields[3].fieldId = nvml::kFiDevPowerInstant;
  fields[3].scopeId = nvml::kPowerScopeMemory;
  rc = ask(fn.device_get_field_values, static_cast<int>(fields.size()), fields.data());
  auto field = [&](std::size_t i) -> Reading<unsigned> {
    const nvmlReturn_t status = field_status(rc, fields[i]);
    if (status != NVML_SUCCESS) {
      if (rc == NVML_SUCCESS) extra_failure(d, status);  // a lost GPU said in the field
      return Reading<unsigned>::missing(missing_from(status));
    }
    return static_cast<unsigned>(nvml_number(fields[i].valueType, fields[i].value));
  };
  r.pcie_replay_rollovers = field(0);
  r.recovery_action = field(1);
  auto watts = [](const Reading<unsigned>& mw) {
    return mw ? Reading<double>(*mw / 1000.0) : Reading<double>::missing(mw.why());
  };
  r.memory_power_average_w = watts(field(2));
  r.memory_power_instant_w = watts(field(3));

  if (d.lost) return report_details_missing(Missing::kGpuLost);
  return r;
}

}  // namespace gpumon
