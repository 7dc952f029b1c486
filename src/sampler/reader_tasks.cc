// SPDX-License-Identifier: MIT
#include "sampler/reader_tasks.h"

#include <algorithm>
#include <cmath>

namespace gpumon {

using std::chrono::microseconds;
using std::chrono::milliseconds;

namespace {

// GPM needs 100 ms between samples (nvml.h); the backend answers kNotAvailable otherwise.
constexpr milliseconds kGpmMinimumPeriod{100};

void set_gpm_missing(DeviceSample& s, Missing why) {
  s.sm_active_ratio = Reading<double>::missing(why);
  s.sm_occupancy_ratio = Reading<double>::missing(why);
  s.tensor_active_ratio = Reading<double>::missing(why);
  s.dram_bw_util_ratio = Reading<double>::missing(why);
  s.gr_engine_active_ratio = Reading<double>::missing(why);
  s.gpm_window_s = Reading<double>::missing(why);
}

}  // namespace

Task make_gpm_task(const SamplerConfig& config) {
  // Slow tier (DESIGN.md: a GPM sample is up to a few ms of busy CPU): its own period, spread
  // over the GPUs so one tick makes few of them.
  Task t{"gpm", std::max({config.gpm_period, config.interval, kGpmMinimumPeriod}), false,
         microseconds(1000), [](GpuBackend& b, unsigned gpu, GpuTickOutput& out) {
           DeviceSample& s = out.sample;
           if (!b.gpm_supported(gpu)) return set_gpm_missing(s, Missing::kNotSupported);
           const Reading<GpmReading> r = b.read_gpm(gpu);
           if (!r) return set_gpm_missing(s, r.why());
           s.sm_active_ratio = r->sm_active_ratio;
           s.sm_occupancy_ratio = r->sm_occupancy_ratio;
           s.tensor_active_ratio = r->tensor_active_ratio;
           s.dram_bw_util_ratio = r->dram_bw_util_ratio;
           s.gr_engine_active_ratio = r->gr_engine_active_ratio;
           s.gpm_window_s = r->window_s;
         }};
  t.spread = true;
  return t;
}

std::vector<Task> make_driver_samples_tasks(const SamplerConfig& config) {
  // About 1.5 ms of driver CPU per read on an H200 whatever it returns, so each buffer is read
  // as seldom as it can be without losing a sample: power keeps 2.35 s, utilization 14 s.
  Task power{"power_samples", std::max(config.driver_samples_period, config.interval), false,
             microseconds(1500), [](GpuBackend& b, unsigned gpu, GpuTickOutput& out) {
               const Reading<DriverSamples> r = b.read_driver_samples(gpu, DriverBuffer::kPower);
               out.sample.power_max_w = r ? r->max : Reading<double>::missing(r.why());
             }};
  power.spread = true;
  Task util{"utilization_samples", std::max(config.utilization_samples_period, config.interval),
            false, microseconds(1500), [](GpuBackend& b, unsigned gpu, GpuTickOutput& out) {
              const Reading<DriverSamples> r =
                  b.read_driver_samples(gpu, DriverBuffer::kGpuUtilization);
              Reading<unsigned>& max = out.sample.utilization_gpu_max_pct;
              if (!r) {
                max = Reading<unsigned>::missing(r.why());
              } else if (!r->max) {
                max = Reading<unsigned>::missing(r->max.why());
              } else {
                max = static_cast<unsigned>(std::lround(r->max.value()));
              }
            }};
  util.spread = true;
  return {std::move(power), std::move(util)};
}

Task make_pcie_task(const SamplerConfig& config) {
  Task t{"pcie", std::max(config.pcie_period, config.interval), false, microseconds(40000),
         [](GpuBackend& b, unsigned gpu, GpuTickOutput& out) {
           const PcieThroughput p = b.pcie_throughput(gpu);
           out.sample.pcie_tx_bytes_per_s = p.tx_bytes_per_s;
           out.sample.pcie_rx_bytes_per_s = p.rx_bytes_per_s;
         }};
  t.spread = true;
  return t;
}

void merge_process_utilization(std::vector<GpuProcess>& processes,
                               const Reading<std::vector<ProcessUtilization>>& util) {
  for (GpuProcess& p : processes) {
    if (!util) {
      p.sm_util_pct = Reading<unsigned>::missing(util.why());
      p.mem_util_pct = Reading<unsigned>::missing(util.why());
      continue;
    }
    const auto it = std::find_if(util->begin(), util->end(),
                                 [&](const ProcessUtilization& u) { return u.pid == p.pid; });
    if (it == util->end()) continue;  // no sample for it since the previous read
    p.sm_util_pct = it->sm_util_pct;
    p.mem_util_pct = it->mem_util_pct;
  }
}

}  // namespace gpumon
