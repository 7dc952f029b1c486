// SPDX-License-Identifier: MIT
// C exports for the reads beyond the cheap sample: GPM (SM activity, occupancy, tensor pipe,
// DRAM bandwidth), per-process utilization and PCIe throughput.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "fake_nvml/runtime.h"

using gpumon::fake::device_call;
using gpumon::fake::DeviceState;
using gpumon::fake::Field;
using gpumon::fake::Runtime;

namespace {

struct GpmMetricSpec {
  unsigned id;
  Field field;
  const char* short_name;
  const char* long_name;
};

constexpr std::array<GpmMetricSpec, 5> kGpmMetrics = {{
    {NVML_GPM_METRIC_GRAPHICS_UTIL, Field::kGrEngineActivePct, "gr_util", "Graphics utilization"},
    {NVML_GPM_METRIC_SM_UTIL, Field::kSmActivePct, "sm_util", "SM utilization"},
    {NVML_GPM_METRIC_SM_OCCUPANCY, Field::kSmOccupancyPct, "sm_occupancy", "SM occupancy"},
    {NVML_GPM_METRIC_ANY_TENSOR_UTIL, Field::kTensorActivePct, "any_tensor_util",
     "Any tensor utilization"},
    {NVML_GPM_METRIC_DRAM_BW_UTIL, Field::kDramBwUtilPct, "dram_bw_util",
     "DRAM bandwidth utilization"},
}};

// The mean of a field over [t1, t2] (scenario seconds), from 64 evenly spaced reads: what a
// counter-based metric averages over the window between two GPM samples.
nvmlReturn_t window_mean(DeviceState& d, Field f, double t1, double t2, double* mean) {
  constexpr int kSteps = 64;
  double sum = 0;
  for (int i = 0; i <= kSteps; ++i) {
    double v = 0;
    const double t = t1 + (t2 - t1) * i / kSteps;
    if (const nvmlReturn_t rc = d.read(f, t, &v); rc != NVML_SUCCESS) return rc;
    sum += std::clamp(v, 0.0, 100.0) * ((i == 0 || i == kSteps) ? 0.5 : 1.0);
  }
  *mean = sum / kSteps;
  return NVML_SUCCESS;
}

void fill_metric(DeviceState& d, double t1, double t2, nvmlGpmMetric_t& m) {
  static char unit[] = "%";
  m.value = 0;
  m.metricInfo = {nullptr, nullptr, nullptr};
  const auto* spec = std::find_if(kGpmMetrics.begin(), kGpmMetrics.end(),
                                  [&](const GpmMetricSpec& s) { return s.id == m.metricId; });
  if (spec == kGpmMetrics.end()) {
    m.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;  // not modelled
    return;
  }
  m.nvmlReturn = window_mean(d, spec->field, t1, t2, &m.value);
  m.metricInfo.shortName = const_cast<char*>(spec->short_name);  // NVML's own strings
  m.metricInfo.longName = const_cast<char*>(spec->long_name);
  m.metricInfo.unit = unit;
}

}  // namespace

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device,
                                                          nvmlGpmSupport_t* support) {
  return device_call(GPUMON_FAKE_SYM(nvmlGpmQueryDeviceSupport), device,
                     [&](DeviceState& d, double) {
                       if (support == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
                       if (support->version != gpumon::nvml::kGpmSupportVersion)
                         return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
                       support->isSupportedDevice = d.spec->gpm_supported ? 1 : 0;
                       return NVML_SUCCESS;
                     });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* sample) {
  return gpumon::fake::system_call(GPUMON_FAKE_SYM(nvmlGpmSampleAlloc), [&](Runtime& rt) {
    if (sample == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *sample = rt.new_gpm_sample();
    return NVML_SUCCESS;
  });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t sample) {
  return gpumon::fake::system_call(GPUMON_FAKE_SYM(nvmlGpmSampleFree), [&](Runtime& rt) {
    if (!rt.valid_gpm_sample(sample)) return NVML_ERROR_INVALID_ARGUMENT;
    rt.free_gpm_sample(sample);
    return NVML_SUCCESS;
  });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t sample) {
  const int symbol = GPUMON_FAKE_SYM(nvmlGpmSampleGet);
  return device_call(symbol, device, [&](DeviceState& d, double t) {
    if (!Runtime::get().valid_gpm_sample(sample)) return NVML_ERROR_INVALID_ARGUMENT;
    if (!d.spec->gpm_supported) return NVML_ERROR_NOT_SUPPORTED;
    *sample = {true, d.index, t};
    return NVML_SUCCESS;
  });
}

// Averages each metric's series over the scenario time between the two samples. Both samples
// must come from the same device; the order does not matter.
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* get) {
  return gpumon::fake::system_call(GPUMON_FAKE_SYM(nvmlGpmMetricsGet), [&](Runtime& rt) {
    if (get == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (get->version != gpumon::nvml::kGpmMetricsGetVersion)
      return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (get->numMetrics > NVML_GPM_METRIC_MAX || !rt.valid_gpm_sample(get->sample1) ||
        !rt.valid_gpm_sample(get->sample2)) {
      return NVML_ERROR_INVALID_ARGUMENT;
    }
    const nvmlGpmSample_st& a = *get->sample1;
    const nvmlGpmSample_st& b = *get->sample2;
    if (!a.filled || !b.filled || a.device != b.device) return NVML_ERROR_INVALID_ARGUMENT;
    DeviceState* d = rt.device(a.device);
    if (d == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < get->numMetrics; ++i) {
      fill_metric(*d, std::min(a.t_s, b.t_s), std::max(a.t_s, b.t_s), get->metrics[i]);
    }
    return NVML_SUCCESS;
  });
}

// One sample per process with a utilization series, stamped at the newest point of the
// driver's 200 ms grid, when that stamp is newer than lastSeenTimeStamp. NULL or a short buffer:
// INSUFFICIENT_SIZE with the count; nothing newer: NOT_FOUND.
GPUMON_FAKE_EXPORT nvmlReturn_t
nvmlDeviceGetProcessUtilization(nvmlDevice_t device, nvmlProcessUtilizationSample_t* utilization,
                                unsigned int* count, unsigned long long lastSeenTimeStamp) {
  const int symbol = GPUMON_FAKE_SYM(nvmlDeviceGetProcessUtilization);
  return device_call(symbol, device, [&](DeviceState& d, double t) {
    if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (const nvmlReturn_t rc = d.check(Field::kProcessUtilization, symbol, t); rc != NVML_SUCCESS)
      return rc;
    constexpr double kPeriodS = 0.2;
    const double at = std::floor(t / kPeriodS) * kPeriodS;
    const unsigned long long stamp = Runtime::get().wall_us(at);
    std::vector<nvmlProcessUtilizationSample_t> out;
    for (const auto& p : d.spec->processes) {
      if (at < p.start_s || at >= p.end_s || (!p.sm_util_pct && !p.mem_util_pct)) continue;
      if (stamp <= lastSeenTimeStamp) continue;
      auto pct = [&](const std::optional<gpumon::fake::Series>& s) {
        return s ? static_cast<unsigned>(gpumon::fake::to_unsigned(
                       gpumon::fake::evaluate(*s, at), std::numeric_limits<unsigned>::max()))
                 : 0U;
      };
      out.push_back({p.pid, stamp, pct(p.sm_util_pct), pct(p.mem_util_pct), 0, 0});
    }
    if (out.empty()) return NVML_ERROR_NOT_FOUND;
    if (utilization == nullptr || *count < out.size()) {
      *count = static_cast<unsigned>(out.size());
      return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    std::copy(out.begin(), out.end(), utilization);
    *count = static_cast<unsigned>(out.size());
    return NVML_SUCCESS;
  });
}

// KB/s over the driver's ~20 ms counting window (the call takes that long: see Runtime::gate).
// The counter is taken as unsigned int (same ABI as the enum), so any value a caller passes is
// well defined here.
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device,
                                                            unsigned int counter,
                                                            unsigned int* value) {
  return device_call(GPUMON_FAKE_SYM(nvmlDeviceGetPcieThroughput), device,
                     [&](DeviceState& d, double t) {
                       if (value == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
                       Field f = Field::kPcieTxKbPerS;
                       if (counter == static_cast<unsigned>(NVML_PCIE_UTIL_RX_BYTES)) {
                         f = Field::kPcieRxKbPerS;
                       } else if (counter != static_cast<unsigned>(NVML_PCIE_UTIL_TX_BYTES)) {
                         return NVML_ERROR_INVALID_ARGUMENT;
                       }
                       double v = 0;
                       if (const nvmlReturn_t rc = d.read(f, t, &v); rc != NVML_SUCCESS) return rc;
                       *value = static_cast<unsigned>(
                           gpumon::fake::to_unsigned(v, std::numeric_limits<unsigned>::max()));
                       return NVML_SUCCESS;
                     });
}
