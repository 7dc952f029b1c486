// SPDX-License-Identifier: MIT
#include "sampler/sampler_task.h"

#include <stdexcept>
#include <string>

#include "sampler/reader_tasks.h"

namespace gpumon {

using std::chrono::milliseconds;

void validate(const SamplerConfig& config) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("sampler: " + what); };
  if (config.interval < milliseconds(10) || config.interval > milliseconds(60000)) {
    fail("interval must be between 10 ms (100 Hz) and 60 s, got " +
         std::to_string(config.interval.count()) + " ms");
  }
  if (config.energy && config.energy_period.count() <= 0) fail("energy period must be > 0");
  if (config.processes && config.process_period.count() <= 0) fail("process period must be > 0");
  if (config.history_capacity == 0) fail("history capacity must be at least 1 tick");
  if (config.gpm && config.gpm_period < milliseconds(100)) {
    fail("GPM period must be at least 100 ms (NVML's minimum between GPM samples)");
  }
  if (config.driver_samples && (config.driver_samples_period.count() <= 0 ||
                                config.utilization_samples_period.count() <= 0)) {
    fail("driver sample periods must be > 0");
  }
  if (config.pcie && config.pcie_period.count() <= 0) fail("PCIe period must be > 0");
  if (config.event_capacity == 0) fail("event capacity must be at least 1");
  if (!(config.slow_task_cpu_share > 0 && config.slow_task_cpu_share <= 1)) {
    fail("slow task CPU share must be in (0, 1]");
  }
  if (config.stop_timeout.count() <= 0) fail("stop timeout must be > 0");
  if (config.min_reader_wait.count() < 0) fail("minimum reader wait must be >= 0");
}

std::vector<Task> make_builtin_tasks(const SamplerConfig& config) {
  std::vector<Task> tasks;
  const std::uint32_t moved = static_cast<std::uint32_t>(MetricGroup::kEnergy) |
                              static_cast<std::uint32_t>(MetricGroup::kStaticDetails);
  // Paced groups are read every tick anyway when the interval is no shorter than their period;
  // a group in both paced sets goes with the slower one.
  const std::uint32_t slow_bits =
      config.slow_metrics_period > config.interval ? config.slow_metrics.bits() : 0;
  const std::uint32_t util_bits = config.utilization_period > config.interval
                                      ? static_cast<std::uint32_t>(MetricGroup::kUtilization)
                                      : 0;
  MetricSet metrics, slow, util;
  for (std::uint32_t bit = 1; bit != 0 && bit <= MetricSet::all().bits(); bit <<= 1) {
    if ((config.metrics.bits() & bit) == 0 || (bit & moved) != 0) continue;
    const auto group = static_cast<MetricGroup>(bit);
    if ((bit & slow_bits) != 0) {
      slow |= group;
    } else if ((bit & util_bits) != 0) {
      util |= group;
    } else {
      metrics |= group;
    }
  }
  // Cheap tier (DESIGN.md: 0.3-19 us per call): every tick.
  tasks.push_back({"metrics", milliseconds(0), false, std::chrono::microseconds(50),
                   [metrics](GpuBackend& b, unsigned gpu, GpuTickOutput& out) {
                     out.sample = b.sample(gpu, metrics);
                   }});
  if (config.energy) {
    // Slow tier (about 2.4 ms of busy CPU per H200): its own period, never above 1 Hz by default.
    tasks.push_back({"energy", std::max(config.energy_period, config.interval), false,
                     std::chrono::microseconds(2400),
                     [](GpuBackend& b, unsigned gpu, GpuTickOutput& out) {
                       out.sample.energy_mj = b.sample(gpu, MetricGroup::kEnergy).energy_mj;
                     },
                     /*spread=*/true, /*edges=*/true});
  }
  if (config.static_details) {
    // About 11 ms per H200 and never changes: once.
    tasks.push_back({"static_details", milliseconds(0), true, std::chrono::microseconds(11000),
                     [](GpuBackend& b, unsigned gpu, GpuTickOutput&) {
                       (void)b.sample(gpu, MetricGroup::kStaticDetails);
                     }});
  }
  if (config.processes) {
    // Cheap per call, but the list changes slowly and host details cost /proc reads.
    tasks.push_back(
        {"processes", std::max(config.process_period, config.interval), false,
         std::chrono::microseconds(20),
         [util = config.process_utilization](GpuBackend& b, unsigned gpu, GpuTickOutput& out) {
           out.processes = b.processes(gpu);
           if (util && *out.processes && !out.processes->value().empty()) {
             merge_process_utilization(out.processes->value(), b.process_utilization(gpu));
           }
         }});
  }
  // Paced groups: merged into the tick's sample (the metrics task ran first and set the rest).
  const auto paced = [&](const char* name, MetricSet groups, milliseconds period) {
    if (groups.empty()) return;
    tasks.push_back({name, period, false, std::chrono::microseconds(150),
                     [groups](GpuBackend& b, unsigned gpu, GpuTickOutput& out) {
                       merge_groups(out.sample, b.sample(gpu, groups), groups);
                     }});
  };
  paced("slow_metrics", slow, config.slow_metrics_period);
  paced("utilization", util, config.utilization_period);
  if (config.gpm) tasks.push_back(make_gpm_task(config));
  if (config.driver_samples) {
    for (Task& t : make_driver_samples_tasks(config)) tasks.push_back(std::move(t));
  }
  if (config.pcie) tasks.push_back(make_pcie_task(config));
  return tasks;
}

std::size_t history_ticks(const SamplerConfig& config, unsigned gpus) {
  const std::size_t per_tick = sizeof(TickSample) + std::size_t{gpus} * sizeof(DeviceSample);
  return std::max<std::size_t>(
      1, std::min(config.history_capacity, config.history_max_bytes / per_tick));
}

}  // namespace gpumon
