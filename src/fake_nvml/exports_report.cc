// SPDX-License-Identifier: MIT
// C exports: what only nvidia-smi -q shows (fact kReportDetails). Static answers of an idle
// H200 (DeviceSpec); field values 95 and 230 and the memory's power are in exports_lists.cc.
#include <cstring>
#include <type_traits>

#include "fake_nvml/runtime.h"

using gpumon::fake::device_call;
using gpumon::fake::DeviceState;
using gpumon::fake::Field;

namespace {

// `fill(spec)`'s status: its own, or SUCCESS when it has none.
template <typename Fill, typename Spec>
nvmlReturn_t filled(Fill& fill, const Spec& spec) {
  if constexpr (std::is_void_v<decltype(fill(spec))>) {
    fill(spec);
    return NVML_SUCCESS;
  } else {
    return fill(spec);
  }
}

// Checks the fact, then lets `fill` write the answer (and return a status, if it has one).
template <typename Fill>
nvmlReturn_t report_call(int symbol, nvmlDevice_t device, const void* out, Fill fill) {
  return device_call(symbol, device, [&](DeviceState& d, double t) {
    if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const nvmlReturn_t rc = d.check(Field::kReportDetails, symbol, t);
    return rc != NVML_SUCCESS ? rc : filled(fill, *d.spec);
  });
}

// report_call for a struct with a version word: a version other than `version` is refused.
template <typename Out, typename Fill>
nvmlReturn_t versioned_call(int symbol, nvmlDevice_t device, Out* out, unsigned version,
                            Fill fill) {
  return report_call(symbol, device, out, [&](const auto& spec) {
    return out->version != version ? NVML_ERROR_ARGUMENT_VERSION_MISMATCH : filled(fill, spec);
  });
}

}  // namespace

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetClock(nvmlDevice_t device, nvmlClockType_t type,
                                                   unsigned int id, unsigned int* mhz) {
  const int symbol = GPUMON_FAKE_SYM(nvmlDeviceGetClock);
  if (type != NVML_CLOCK_GRAPHICS || id != gpumon::nvml::kClockIdCustomerBoostMax) {
    return device_call(symbol, device, [](DeviceState&, double) {
      return NVML_ERROR_NOT_SUPPORTED;  // only the customer boost maximum is modelled
    });
  }
  return report_call(symbol, device, mhz, [&](const auto& s) { *mhz = s.customer_boost_max_mhz; });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetEncoderStats(nvmlDevice_t device,
                                                          unsigned int* sessions, unsigned int* fps,
                                                          unsigned int* latency_us) {
  const void* out = sessions != nullptr && fps != nullptr ? latency_us : nullptr;
  return report_call(GPUMON_FAKE_SYM(nvmlDeviceGetEncoderStats), device, out,
                     [&](const auto&) { *sessions = *fps = *latency_us = 0; });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetFBCStats(nvmlDevice_t device, nvmlFBCStats_t* out) {
  return report_call(GPUMON_FAKE_SYM(nvmlDeviceGetFBCStats), device, out,
                     [&](const auto&) { *out = nvmlFBCStats_t{}; });
}

// A GPU without row remapping (its remapped-rows series unsupported) has no histogram either.
GPUMON_FAKE_EXPORT nvmlReturn_t
nvmlDeviceGetRowRemapperHistogram(nvmlDevice_t device, nvmlRowRemapperHistogramValues_t* out) {
  const int symbol = GPUMON_FAKE_SYM(nvmlDeviceGetRowRemapperHistogram);
  return device_call(symbol, device, [&](DeviceState& d, double t) {
    if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    nvmlReturn_t rc = d.check(Field::kReportDetails, symbol, t);
    double remapped = 0;
    if (rc == NVML_SUCCESS) rc = d.read(Field::kRemappedRowsCorrectable, t, &remapped);
    if (rc != NVML_SUCCESS) return rc;
    *out = nvmlRowRemapperHistogramValues_t{};
    out->max = d.spec->remap_banks_max;
    return NVML_SUCCESS;
  });
}

// The active counts and flags are the scenario's remapped-rows series, as field values 142-145
// give them; no row is inactive.
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetRemappedRows_v2(nvmlDevice_t device,
                                                             nvmlRemappedRowsInfo_v2_t* out) {
  const int symbol = GPUMON_FAKE_SYM(nvmlDeviceGetRemappedRows_v2);
  return device_call(symbol, device, [&](DeviceState& d, double t) {
    if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    nvmlReturn_t rc = d.check(Field::kReportDetails, symbol, t);
    *out = nvmlRemappedRowsInfo_v2_t{};
    const std::pair<Field, unsigned*> parts[] = {
        {Field::kRemappedRowsCorrectable, &out->corrActiveRemaps},
        {Field::kRemappedRowsUncorrectable, &out->uncActiveRemaps},
        {Field::kRemappedRowsPending, &out->bPending},
        {Field::kRemappedRowsFailure, &out->bFailureOccurred}};
    for (const auto& [field, slot] : parts) {
      double v = 0;
      if (rc == NVML_SUCCESS) rc = d.read(field, t, &v);
      *slot = static_cast<unsigned>(gpumon::fake::to_unsigned(v, 0xffffffffULL));
    }
    return rc;
  });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetC2cModeInfoV(nvmlDevice_t device,
                                                          nvmlC2cModeInfo_v1_t* out) {
  return report_call(GPUMON_FAKE_SYM(nvmlDeviceGetC2cModeInfoV), device, out,
                     [&](const auto& s) { out->isC2cEnabled = s.c2c_enabled ? 1 : 0; });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetSramEccErrorStatus(nvmlDevice_t device,
                                                                nvmlEccSramErrorStatus_v1_t* out) {
  return versioned_call(GPUMON_FAKE_SYM(nvmlDeviceGetSramEccErrorStatus), device, out,
                        gpumon::nvml::kEccSramErrorStatusV1, [&](const auto& spec) {
                          if (!spec.ecc_enabled) return NVML_ERROR_NOT_SUPPORTED;
                          *out = nvmlEccSramErrorStatus_v1_t{};  // no SRAM error
                          out->version = gpumon::nvml::kEccSramErrorStatusV1;
                          return NVML_SUCCESS;
                        });
}

// The DRAM's counts are the scenario's ECC series, which nvmlDeviceGetTotalEccErrors answers
// too (both scopes: the driver's life is the board's here); the SRAM has none. Without ECC,
// NOT_SUPPORTED, as the driver answers.
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMemoryErrorCounter(nvmlDevice_t device,
                                                                nvmlMemoryErrorType_t type,
                                                                nvmlEccCounterType_t,
                                                                unsigned int location,
                                                                unsigned long long* count) {
  const int symbol = GPUMON_FAKE_SYM(nvmlDeviceGetMemoryErrorCounter);
  return device_call(symbol, device, [&](DeviceState& d, double t) {
    if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (location != gpumon::nvml::kMemoryLocationDram &&
        location != gpumon::nvml::kMemoryLocationSram) {
      return NVML_ERROR_NOT_SUPPORTED;
    }
    nvmlReturn_t rc = d.check(Field::kReportDetails, symbol, t);
    if (rc == NVML_SUCCESS && !d.spec->ecc_enabled) rc = NVML_ERROR_NOT_SUPPORTED;
    if (rc != NVML_SUCCESS) return rc;
    *count = 0;
    if (location == gpumon::nvml::kMemoryLocationSram) return NVML_SUCCESS;
    double v = 0;
    rc = d.read(type == NVML_MEMORY_ERROR_TYPE_CORRECTED ? Field::kEccCorrectedVolatile
                                                         : Field::kEccUncorrectedVolatile,
                t, &v);
    if (rc == NVML_SUCCESS) *count = gpumon::fake::to_unsigned(v, ~0ULL);
    return rc;
  });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetRepairStatus(nvmlDevice_t device,
                                                          nvmlRepairStatus_v1_t* out) {
  return versioned_call(
      GPUMON_FAKE_SYM(nvmlDeviceGetRepairStatus), device, out, gpumon::nvml::kRepairStatusV1,
      [&](const auto&) { out->bChannelRepairPending = out->bTpcRepairPending = 0; });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUnrepairableMemoryFlag_v1(
    nvmlDevice_t device, nvmlUnrepairableMemoryStatus_v1_t* out) {
  return report_call(GPUMON_FAKE_SYM(nvmlDeviceGetUnrepairableMemoryFlag_v1), device, out,
                     [&](const auto&) { out->bUnrepairableMemory = 0; });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetConfComputeProtectedMemoryUsage(nvmlDevice_t device,
                                                                             nvmlMemory_t* out) {
  return report_call(GPUMON_FAKE_SYM(nvmlDeviceGetConfComputeProtectedMemoryUsage), device, out,
                     [&](const auto&) { *out = nvmlMemory_t{}; });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCapabilities(nvmlDevice_t device,
                                                          nvmlDeviceCapabilities_v1_t* out) {
  return versioned_call(GPUMON_FAKE_SYM(nvmlDeviceGetCapabilities), device, out,
                        gpumon::nvml::kDeviceCapabilitiesV1,
                        [&](const auto&) { out->capMask = 0; });
}
