// SPDX-License-Identifier: MIT
// C exports that fill arrays: field values, the driver's sample buffers and running processes.
#include <cmath>
#include <cstring>
#include <limits>

#include "fake_nvml/runtime.h"

using gpumon::fake::device_call;
using gpumon::fake::DeviceState;
using gpumon::fake::Field;

namespace {

// A driver sample buffer: one value every period_s, the newest `kept` of them retained.
struct SampleBuffer {
  Field field;
  double period_s;
  unsigned kept;
};

bool sample_buffer(unsigned int type, SampleBuffer* out) {
  switch (type) {
    case NVML_TOTAL_POWER_SAMPLES:
      *out = {Field::kPowerInstantMw, 0.02, 120};
      return true;  // 2.4 s
    case NVML_GPU_UTILIZATION_SAMPLES: *out = {Field::kUtilizationGpuPct, 0.2, 70}; return true;
    case NVML_MEMORY_UTILIZATION_SAMPLES:
      *out = {Field::kUtilizationMemoryPct, 0.2, 70};
      return true;
    case NVML_ENC_UTILIZATION_SAMPLES: *out = {Field::kEncoderUtilPct, 0.2, 70}; return true;
    case NVML_DEC_UTILIZATION_SAMPLES: *out = {Field::kDecoderUtilPct, 0.2, 70}; return true;
    case NVML_JPG_UTILIZATION_SAMPLES: *out = {Field::kJpegUtilPct, 0.2, 70}; return true;
    case NVML_OFA_UTILIZATION_SAMPLES: *out = {Field::kOfaUtilPct, 0.2, 70}; return true;
    case NVML_PROCESSOR_CLK_SAMPLES: *out = {Field::kSmClockMhz, 0.2, 70}; return true;
    case NVML_MEMORY_CLK_SAMPLES: *out = {Field::kMemClockMhz, 0.2, 70}; return true;
    default: return false;  // module power: not modelled
  }
}

// Processes listed now: started, not ended, and visible at this list call.
std::vector<const gpumon::fake::ProcessSpec*> visible_processes(const DeviceState& d, double t) {
  std::vector<const gpumon::fake::ProcessSpec*> out;
  for (const auto& p : d.spec->processes) {
    if (t >= p.start_s && t < p.end_s && d.process_list_calls >= p.visible_from_call)
      out.push_back(&p);
  }
  return out;
}

// Fills v1 (16-byte) or v2 (24-byte) process structs. Sizing: *count == 0 with no buffer gives
// INSUFFICIENT_SIZE and the count when there are processes, SUCCESS with 0 when none.
nvmlReturn_t processes(int symbol, nvmlDevice_t device, unsigned int* count, void* infos, bool v2) {
  return device_call(symbol, device, [&](DeviceState& d, double t) {
    if (count == nullptr || (infos == nullptr && *count != 0)) return NVML_ERROR_INVALID_ARGUMENT;
    ++d.process_list_calls;
    if (const nvmlReturn_t rc = d.check(Field::kProcesses, symbol, t); rc != NVML_SUCCESS)
      return rc;
    const auto procs = visible_processes(d, t);
    const auto n = static_cast<unsigned int>(procs.size());
    if (*count < n) {
      *count = n;
      return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    *count = n;
    auto* bytes = static_cast<unsigned char*>(infos);
    for (unsigned int i = 0; i < n; ++i) {
      unsigned long long used = gpumon::nvml::kValueNotAvailableUll;
      if (procs[i]->used_memory_bytes) {
        used = gpumon::fake::to_unsigned(gpumon::fake::evaluate(*procs[i]->used_memory_bytes, t),
                                         std::numeric_limits<unsigned long long>::max() - 1);
      }
      if (v2) {
        const nvmlProcessInfo_v2_t info{procs[i]->pid, used, gpumon::nvml::kNoMigInstance,
                                        gpumon::nvml::kNoMigInstance};
        std::memcpy(bytes + i * sizeof info, &info, sizeof info);
      } else {
        const nvmlProcessInfo_v1_t info{procs[i]->pid, used};
        std::memcpy(bytes + i * sizeof info, &info, sizeof info);
      }
    }
    return NVML_SUCCESS;
  });
}

}  // namespace

namespace {

// The field values the fake answers: NVML's id, the scenario series, and whether NVML gives
// it as unsigned long long (the cumulative NVLink counters) or unsigned int.
struct FakeField {
  unsigned id;
  Field field;
  bool ull;
};
constexpr FakeField kFakeFields[] = {
    {gpumon::nvml::kFiDevMemoryTemp, Field::kTemperatureMemoryC, false},
    {gpumon::nvml::kFiDevPowerInstant, Field::kPowerInstantMw, false},
    {gpumon::nvml::kFiDevPowerAverage, Field::kPowerAverageMw, false},
    {gpumon::nvml::kFiDevRemappedCor, Field::kRemappedRowsCorrectable, false},
    {gpumon::nvml::kFiDevRemappedUnc, Field::kRemappedRowsUncorrectable, false},
    {gpumon::nvml::kFiDevRemappedPending, Field::kRemappedRowsPending, false},
    {gpumon::nvml::kFiDevRemappedFailure, Field::kRemappedRowsFailure, false},
    {gpumon::nvml::kFiDevNvlinkThroughputDataTx, Field::kNvlinkDataTxKib, true},
    {gpumon::nvml::kFiDevNvlinkThroughputDataRx, Field::kNvlinkDataRxKib, true},
};

// The clock-event time counters (ns, unsigned long long): the time the reason's bit was set in
// `clock_event_reasons`, each counter's slot in DeviceState::event_time in this order.
struct FakeEventTime {
  unsigned id;
  Field fact;
  std::uint64_t bit;
};
constexpr FakeEventTime kFakeEventTimes[] = {
    {gpumon::nvml::kFiDevPerfPolicyPower, Field::kPowerCapTime,
     gpumon::nvml::kClocksEventSwPowerCap},
    {gpumon::nvml::kFiDevPerfPolicySyncBoost, Field::kSyncBoostTime,
     gpumon::nvml::kClocksEventSyncBoost},
    {gpumon::nvml::kFiDevClocksEventReasonSwThermSlowdown, Field::kSlowdownTime,
     gpumon::nvml::kClocksEventSwThermalSlowdown},
    {gpumon::nvml::kFiDevClocksEventReasonHwThermSlowdown, Field::kSlowdownTime,
     gpumon::nvml::kClocksEventHwThermalSlowdown},
    {gpumon::nvml::kFiDevClocksEventReasonHwPowerBrakeSlowdown, Field::kSlowdownTime,
     gpumon::nvml::kClocksEventHwPowerBrakeSlowdown},
};

// The T.Limit thresholds: signed degrees relative to T.Limit, static.
struct FakeTlimit {
  unsigned id;
  int gpumon::fake::DeviceSpec::*member;
};
constexpr FakeTlimit kFakeTlimits[] = {
    {gpumon::nvml::kFiDevTemperatureShutdownTlimit, &gpumon::fake::DeviceSpec::tlimit_shutdown_c},
    {gpumon::nvml::kFiDevTemperatureSlowdownTlimit, &gpumon::fake::DeviceSpec::tlimit_slowdown_c},
    {gpumon::nvml::kFiDevTemperatureMemMaxTlimit, &gpumon::fake::DeviceSpec::tlimit_mem_max_c},
    {gpumon::nvml::kFiDevTemperatureGpuMaxTlimit, &gpumon::fake::DeviceSpec::tlimit_gpu_max_c},
};

// The field values only nvidia-smi -q reads (fact kReportDetails): PCIe replay rollovers (0),
// the recovery action, and power at the memory scope (average only, as on the H200). Other
// scopes of the power fields than the GPU's are NOT_SUPPORTED. False when `v` is none of these.
bool report_field(DeviceState& d, double t, nvmlFieldValue_t& v) {
  const bool power = v.fieldId == gpumon::nvml::kFiDevPowerAverage ||
                     v.fieldId == gpumon::nvml::kFiDevPowerInstant;
  if (power && v.scopeId == 0) return false;
  if (!power && v.fieldId != gpumon::nvml::kFiDevPcieReplayRolloverCounter &&
      v.fieldId != gpumon::nvml::kFiDevGpuRecoveryAction)
    return false;
  v.nvmlReturn = d.check(Field::kReportDetails, GPUMON_FAKE_SYM(nvmlDeviceGetFieldValues), t);
  if (v.nvmlReturn != NVML_SUCCESS) return true;
  if (v.fieldId == gpumon::nvml::kFiDevGpuRecoveryAction) {
    v.value.uiVal = d.spec->recovery_action;
  } else if (v.fieldId == gpumon::nvml::kFiDevPowerAverage &&
             v.scopeId == gpumon::nvml::kPowerScopeMemory) {
    v.value.uiVal = d.spec->memory_power_mw;
  } else if (power) {
    v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
  }
  return true;
}

}  // namespace

// kFakeFields; any other id is NOT_SUPPORTED. Each value has its own nvmlReturn.
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int count,
                                                         nvmlFieldValue_t* values) {
  return device_call(
      GPUMON_FAKE_SYM(nvmlDeviceGetFieldValues), device, [&](DeviceState& d, double t) {
        if (count <= 0 || values == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        const auto& rt = gpumon::fake::Runtime::get();
        for (int i = 0; i < count; ++i) {
          nvmlFieldValue_t& v = values[i];
          v.timestamp = static_cast<long long>(rt.wall_us(t));
          v.latencyUsec = 0;
          v.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
          v.value.ullVal = 0;
          v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
          if (report_field(d, t, v)) continue;
          for (const FakeField& f : kFakeFields) {
            if (f.id != v.fieldId) continue;
            double value = 0;
            v.nvmlReturn = d.read(f.field, t, &value);
            if (v.nvmlReturn != NVML_SUCCESS) break;
            if (f.ull) {
              v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
              v.value.ullVal = static_cast<unsigned long long>(
                  gpumon::fake::to_unsigned(value, std::numeric_limits<unsigned long long>::max()));
            } else {
              v.value.uiVal = static_cast<unsigned int>(
                  gpumon::fake::to_unsigned(value, std::numeric_limits<unsigned int>::max()));
            }
            break;
          }
          for (const FakeTlimit& f : kFakeTlimits) {
            if (f.id != v.fieldId) continue;
            v.nvmlReturn =
                d.check(Field::kTemperatureLimits, GPUMON_FAKE_SYM(nvmlDeviceGetFieldValues), t);
            if (v.nvmlReturn != NVML_SUCCESS) break;
            v.valueType = NVML_VALUE_TYPE_SIGNED_INT;
            v.value.siVal = d.spec->*f.member;
            break;
          }
          for (std::size_t slot = 0; slot < std::size(kFakeEventTimes); ++slot) {
            const FakeEventTime& f = kFakeEventTimes[slot];
            if (f.id != v.fieldId) continue;
            v.nvmlReturn = d.check(f.fact, GPUMON_FAKE_SYM(nvmlDeviceGetFieldValues), t);
            if (v.nvmlReturn != NVML_SUCCESS) break;
            v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
            v.value.ullVal = static_cast<unsigned long long>(gpumon::fake::to_unsigned(
                d.event_time_ns(slot, f.bit, t), std::numeric_limits<unsigned long long>::max()));
            break;
          }
        }
        return NVML_SUCCESS;
      });
}

// The driver's buffer on a grid of scenario time: samples after lastSeenTimeStamp, oldest
// first. With no buffer, *sampleCount is the buffer's capacity. NOT_FOUND when none is newer.
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t device, unsigned int type,
                                                     unsigned long long lastSeenTimeStamp,
                                                     nvmlValueType_t* sampleValType,
                                                     unsigned int* sampleCount,
                                                     nvmlSample_t* samples) {
  const int symbol = GPUMON_FAKE_SYM(nvmlDeviceGetSamples);
  return device_call(symbol, device, [&](DeviceState& d, double t) {
    SampleBuffer buf{};
    if (sampleValType == nullptr || sampleCount == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (!sample_buffer(type, &buf)) return NVML_ERROR_NOT_SUPPORTED;
    if (nvmlReturn_t rc = d.check(Field::kSamples, symbol, t); rc != NVML_SUCCESS) return rc;
    if (d.spec->unsupported.test(static_cast<std::size_t>(buf.field)))
      return NVML_ERROR_NOT_SUPPORTED;
    *sampleValType = NVML_VALUE_TYPE_UNSIGNED_INT;
    if (samples == nullptr) {
      *sampleCount = buf.kept;
      return NVML_SUCCESS;
    }
    const auto& rt = gpumon::fake::Runtime::get();
    const double newest = std::floor(t / buf.period_s);
    const double oldest = std::max(0.0, newest - buf.kept + 1);
    unsigned int filled = 0;
    for (double k = oldest; k <= newest && filled < *sampleCount; k += 1) {
      const double at = k * buf.period_s;
      const unsigned long long stamp = rt.wall_us(at);
      if (stamp <= lastSeenTimeStamp) continue;
      double value = 0;
      if (const nvmlReturn_t rc = d.read(buf.field, at, &value); rc != NVML_SUCCESS) return rc;
      samples[filled].timeStamp = stamp;
      samples[filled].sampleValue.ullVal = 0;
      samples[filled].sampleValue.uiVal = static_cast<unsigned int>(
          gpumon::fake::to_unsigned(value, std::numeric_limits<unsigned int>::max()));
      ++filled;
    }
    *sampleCount = filled;
    return filled == 0 ? NVML_ERROR_NOT_FOUND : NVML_SUCCESS;
  });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
                                                                        unsigned int* count,
                                                                        void* infos) {
  return processes(GPUMON_FAKE_SYM(nvmlDeviceGetComputeRunningProcesses_v3), device, count, infos,
                   true);
}
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device,
                                                                        unsigned int* count,
                                                                        void* infos) {
  return processes(GPUMON_FAKE_SYM(nvmlDeviceGetComputeRunningProcesses_v2), device, count, infos,
                   true);
}
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device,
                                                                     unsigned int* count,
                                                                     void* infos) {
  return processes(GPUMON_FAKE_SYM(nvmlDeviceGetComputeRunningProcesses), device, count, infos,
                   false);
}

// Present so that the loader reads the 24-byte layout that drivers from 550 on fill for _v3
// (it takes the 32-byte one only when ConfComputeMemSizeInfo exists and this does not).
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetRunningProcessDetailList(nvmlDevice_t device, void*) {
  return device_call(GPUMON_FAKE_SYM(nvmlDeviceGetRunningProcessDetailList), device,
                     [](DeviceState&, double) { return NVML_ERROR_NOT_SUPPORTED; });
}
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetConfComputeMemSizeInfo(nvmlDevice_t device, void*) {
  return device_call(GPUMON_FAKE_SYM(nvmlDeviceGetConfComputeMemSizeInfo), device,
                     [](DeviceState&, double) { return NVML_ERROR_NOT_SUPPORTED; });
}
