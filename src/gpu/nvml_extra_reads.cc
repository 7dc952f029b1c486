// SPDX-License-Identifier: MIT
// NvmlBackend's reads beyond the cheap sample: GPM, the driver's sample buffers, per-process
// utilization and PCIe throughput. Each keeps its per-GPU state in Device::extras.
#include <algorithm>
#include <map>

#include "gpu/event_watcher.h"
#include "gpu/nvml_backend.h"
#include "gpu/nvml_values.h"

namespace gpumon {
namespace {

std::uint64_t wall_now_us() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

Reading<double> gpm_ratio(const nvmlGpmMetric_t& m) {
  if (m.nvmlReturn != NVML_SUCCESS) return Reading<double>::missing(missing_from(m.nvmlReturn));
  return std::clamp(m.value / 100.0, 0.0, 1.0);  // NVML gives percent
}

}  // namespace

// A lost GPU (nvml::is_gpu_lost) is marked lost (the sample path re-probes it); anything else
// is a value.
Missing NvmlBackend::extra_failure(Device& d, nvmlReturn_t rc) {
  const Missing why = missing_from(rc);
  if (why == Missing::kGpuLost && !d.lost) {
    d.lost = true;
    d.last_lost_probe = now();
  }
  if (why == Missing::kGpuLost) d.extras.gpm_have_prev = false;
  return why;
}

// One nvmlGpmQueryDeviceSupport per GPU, then two sample buffers for its lifetime.
bool NvmlBackend::detect_gpm(Device& d) {
  using Gpm = Extras::Gpm;
  Extras& x = d.extras;
  if (x.gpm != Gpm::kUnknown) return x.gpm == Gpm::kSupported;
  const auto& fn = lib_->fn();
  if (fn.gpm_query_device_support == nullptr || fn.gpm_sample_alloc == nullptr ||
      fn.gpm_sample_free == nullptr || fn.gpm_sample_get == nullptr ||
      fn.gpm_metrics_get == nullptr) {
    x.gpm = Gpm::kUnsupported;
    return false;
  }
  if (d.lost || d.handle == nullptr) return false;  // ask again once it answers
  nvmlGpmSupport_t support{};
  support.version = nvml::kGpmSupportVersion;
  const nvmlReturn_t rc = fn.gpm_query_device_support(d.handle, &support);
  if (nvml::is_gpu_lost(rc)) {
    extra_failure(d, rc);
    return false;
  }
  if (rc != NVML_SUCCESS || support.isSupportedDevice == 0 ||
      fn.gpm_sample_alloc(&x.gpm_prev) != NVML_SUCCESS ||
      fn.gpm_sample_alloc(&x.gpm_next) != NVML_SUCCESS) {
    release_gpm(d);
    x.gpm = Gpm::kUnsupported;
    return false;
  }
  x.gpm = Gpm::kSupported;
  return true;
}

void NvmlBackend::release_gpm(Device& d) {
  Extras& x = d.extras;
  for (nvmlGpmSample_t* s : {&x.gpm_prev, &x.gpm_next}) {
    if (*s != nullptr && lib_->fn().gpm_sample_free != nullptr) lib_->fn().gpm_sample_free(*s);
    *s = nullptr;
  }
  x.gpm_have_prev = false;
}

bool NvmlBackend::gpm_supported(unsigned index) {
  Device& d = devices_.at(index);
  if (d.lost || d.handle == nullptr) unavailable(d);
  return detect_gpm(d);
}

Reading<GpmReading> NvmlBackend::read_gpm(unsigned index) {
  using Result = Reading<GpmReading>;
  Device& d = devices_.at(index);
  Extras& x = d.extras;
  if (x.gpm == Extras::Gpm::kUnsupported) return Result::missing(Missing::kNotSupported);
  if (d.lost) x.gpm_have_prev = false;  // a window across a loss means nothing
  if (const auto why = unavailable(d)) return Result::missing(*why);
  if (!detect_gpm(d)) {
    return Result::missing(d.lost ? Missing::kGpuLost : Missing::kNotSupported);
  }
  const auto now = this->now();
  const double window_s = std::chrono::duration<double>(now - x.gpm_prev_time).count();
  if (x.gpm_have_prev && window_s < nvml::kGpmMinWindowS) {
    return Result::missing(Missing::kNotAvailable);  // too soon: no NVML call at all
  }
  const auto& fn = lib_->fn();
  const nvmlReturn_t rc = fn.gpm_sample_get(d.handle, x.gpm_next);
  if (rc != NVML_SUCCESS) {
    if (rc == NVML_ERROR_NOT_SUPPORTED) {
      release_gpm(d);
      x.gpm = Extras::Gpm::kUnsupported;
    }
    return Result::missing(extra_failure(d, rc));
  }
  const bool had_prev = x.gpm_have_prev;
  std::swap(x.gpm_prev, x.gpm_next);  // the new sample starts the next window
  x.gpm_prev_time = now;
  x.gpm_have_prev = true;
  if (!had_prev) return Result::missing(Missing::kNotAvailable);

  nvmlGpmMetricsGet_t get{};
  get.version = nvml::kGpmMetricsGetVersion;
  get.sample1 = x.gpm_next;  // the previous sample (swapped above)
  get.sample2 = x.gpm_prev;
  constexpr nvmlGpmMetricId_t kIds[] = {
      NVML_GPM_METRIC_SM_UTIL, NVML_GPM_METRIC_SM_OCCUPANCY, NVML_GPM_METRIC_ANY_TENSOR_UTIL,
      NVML_GPM_METRIC_DRAM_BW_UTIL, NVML_GPM_METRIC_GRAPHICS_UTIL};
  for (const auto id : kIds) get.metrics[get.numMetrics++].metricId = id;
  const nvmlReturn_t mrc = fn.gpm_metrics_get(&get);
  if (mrc != NVML_SUCCESS) return Result::missing(extra_failure(d, mrc));
  GpmReading r;
  r.sm_active_ratio = gpm_ratio(get.metrics[0]);
  r.sm_occupancy_ratio = gpm_ratio(get.metrics[1]);
  r.tensor_active_ratio = gpm_ratio(get.metrics[2]);
  r.dram_bw_util_ratio = gpm_ratio(get.metrics[3]);
  r.gr_engine_active_ratio = gpm_ratio(get.metrics[4]);
  r.window_s = window_s;
  return r;
}

Reading<DriverSamples> NvmlBackend::read_driver_samples(unsigned index, DriverBuffer which) {
  using Result = Reading<DriverSamples>;
  Device& d = devices_.at(index);
  const auto slot = static_cast<std::size_t>(which);
  Extras& x = d.extras;
  const auto fn = lib_->fn().device_get_samples;
  if (fn == nullptr || x.buffer_unsupported.at(slot))
    return Result::missing(Missing::kNotSupported);
  if (const auto why = unavailable(d)) return Result::missing(*why);
  // NVML's nvmlSamplingType_t, in DriverBuffer's order.
  static constexpr std::array<nvmlSamplingType_t, kDriverBufferCount> kTypes = {
      NVML_TOTAL_POWER_SAMPLES,     NVML_GPU_UTILIZATION_SAMPLES, NVML_MEMORY_UTILIZATION_SAMPLES,
      NVML_ENC_UTILIZATION_SAMPLES, NVML_DEC_UTILIZATION_SAMPLES, NVML_JPG_UTILIZATION_SAMPLES,
      NVML_OFA_UTILIZATION_SAMPLES, NVML_PROCESSOR_CLK_SAMPLES,   NVML_MEMORY_CLK_SAMPLES};
  const nvmlSamplingType_t type = kTypes.at(slot);
  unsigned long long& last_seen = x.buffer_last_seen_us[slot];
  nvmlValueType_t value_type = NVML_VALUE_TYPE_UNSIGNED_INT;
  // The first read asks for the capacity (no buffer); later reads go straight into the kept
  // buffer, doubling it when the driver answers INSUFFICIENT_SIZE.
  std::vector<nvmlSample_t>& buf = x.buffer.at(slot);
  unsigned count = 0;
  nvmlReturn_t rc = NVML_SUCCESS;
  if (buf.empty()) {
    rc = fn(d.handle, type, last_seen, &value_type, &count, nullptr);
    if (rc == NVML_SUCCESS || rc == NVML_ERROR_INSUFFICIENT_SIZE) {
      buf.assign(std::max(count, 128U), nvmlSample_t{});
    }
  }
  for (int attempt = 0; !buf.empty() && attempt < 3; ++attempt) {
    count = static_cast<unsigned>(buf.size());
    rc = fn(d.handle, type, last_seen, &value_type, &count, buf.data());
    if (rc != NVML_ERROR_INSUFFICIENT_SIZE) break;
    buf.assign(buf.size() * 2, nvmlSample_t{});
  }
  DriverSamples out;
  if (rc == NVML_ERROR_NOT_FOUND) return out;  // nothing newer: the buffer ran dry
  if (rc != NVML_SUCCESS) {
    if (rc == NVML_ERROR_NOT_SUPPORTED) x.buffer_unsupported[slot] = true;
    return Result::missing(extra_failure(d, rc));
  }
  const double scale = which == DriverBuffer::kPower ? 1e-3 : 1.0;  // mW -> W
  for (unsigned i = 0; i < count && i < buf.size(); ++i) {
    if (buf[i].timeStamp <= last_seen) continue;
    out.samples.push_back({buf[i].timeStamp, nvml_number(value_type, buf[i].sampleValue) * scale});
  }
  std::sort(
      out.samples.begin(), out.samples.end(),
      [](const DriverSample& a, const DriverSample& b) { return a.timestamp_us < b.timestamp_us; });
  if (out.samples.empty()) return out;
  last_seen = out.samples.back().timestamp_us;
  double sum = 0, max = out.samples.front().value;
  for (const DriverSample& s : out.samples) {
    sum += s.value;
    max = std::max(max, s.value);
  }
  out.max = max;
  out.mean = sum / static_cast<double>(out.samples.size());
  return out;
}

Reading<std::vector<ProcessUtilization>> NvmlBackend::process_utilization(unsigned index) {
  using Result = Reading<std::vector<ProcessUtilization>>;
  Device& d = devices_.at(index);
  Extras& x = d.extras;
  const auto fn = lib_->fn().device_get_process_utilization;
  if (fn == nullptr || x.process_util_unsupported) return Result::missing(Missing::kNotSupported);
  if (const auto why = unavailable(d)) return Result::missing(*why);
  // Without a timestamp NVML averages over a driver-chosen (long) period: start a second back.
  if (x.process_util_last_seen_us == 0) x.process_util_last_seen_us = wall_now_us() - 1000000;
  const unsigned long long last_seen = x.process_util_last_seen_us;
  unsigned count = 0;
  nvmlReturn_t rc = fn(d.handle, nullptr, &count, last_seen);
  std::vector<nvmlProcessUtilizationSample_t> buf;
  for (int attempt = 0; attempt < 4 && (rc == NVML_ERROR_INSUFFICIENT_SIZE ||
                                        (rc == NVML_SUCCESS && count > 0 && buf.empty()));
       ++attempt) {
    count = count * 2 + 5;  // processes come and go between the calls
    buf.assign(count, nvmlProcessUtilizationSample_t{});
    rc = fn(d.handle, buf.data(), &count, last_seen);
  }
  std::vector<ProcessUtilization> out;
  if (rc == NVML_ERROR_NOT_FOUND || (rc == NVML_SUCCESS && buf.empty())) return out;
  if (rc != NVML_SUCCESS) {
    if (rc == NVML_ERROR_NOT_SUPPORTED) x.process_util_unsupported = true;
    return Result::missing(extra_failure(d, rc));
  }
  std::map<unsigned, ProcessUtilization> newest;  // one per pid: the newest sample
  for (unsigned i = 0; i < count && i < buf.size(); ++i) {
    const nvmlProcessUtilizationSample_t& s = buf[i];
    if (s.timeStamp <= last_seen) continue;  // stale: seen before (go-nvml#51)
    x.process_util_last_seen_us = std::max(x.process_util_last_seen_us, s.timeStamp);
    if (s.smUtil > 100 || s.memUtil > 100) continue;  // bogus driver values (nvtop #110)
    auto [it, fresh] = newest.try_emplace(s.pid);
    if (fresh || s.timeStamp > it->second.timestamp_us)
      it->second = {s.pid, s.timeStamp, s.smUtil, s.memUtil};
  }
  out.reserve(newest.size());
  for (const auto& [pid, u] : newest) out.push_back(u);
  return out;
}

PcieThroughput NvmlBackend::pcie_throughput(unsigned index) {
  Device& d = devices_.at(index);
  Extras& x = d.extras;
  const auto fn = lib_->fn().device_get_pcie_throughput;
  auto all = [](Missing why) {
    return PcieThroughput{Reading<double>::missing(why), Reading<double>::missing(why)};
  };
  if (fn == nullptr || x.pcie_unsupported) return all(Missing::kNotSupported);
  if (const auto why = unavailable(d)) return all(*why);
  auto read = [&](nvmlPcieUtilCounter_t counter) -> Reading<double> {
    if (d.lost) return Reading<double>::missing(Missing::kGpuLost);
    unsigned kb_per_s = 0;
    const nvmlReturn_t rc = fn(d.handle, counter, &kb_per_s);
    if (rc == NVML_SUCCESS) return static_cast<double>(kb_per_s) * 1024.0;  // NVML: KB/s
    if (rc == NVML_ERROR_NOT_SUPPORTED) x.pcie_unsupported = true;
    return Reading<double>::missing(extra_failure(d, rc));
  };
  PcieThroughput out;
  out.tx_bytes_per_s = read(NVML_PCIE_UTIL_TX_BYTES);
  out.rx_bytes_per_s = x.pcie_unsupported ? Reading<double>::missing(Missing::kNotSupported)
                                          : read(NVML_PCIE_UTIL_RX_BYTES);
  return out;
}

std::unique_ptr<EventStream> NvmlBackend::watch_events(
    std::function<void(const GpuEvent&)> on_event) {
  auto watcher = std::make_unique<EventWatcher>(*lib_, device_count(), std::move(on_event));
  if (!watcher->start()) return nullptr;
  return watcher;
}

}  // namespace gpumon
