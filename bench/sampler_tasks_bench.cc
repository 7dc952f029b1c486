// SPDX-License-Identifier: MIT
// What each sampler task costs on this machine's GPUs (real NVML unless --library says
// otherwise): runs the Sampler with its default tasks at one rate for a while and prints, as
// JSON, the sampler thread's CPU share and per task its period, calls and mean/max cost. Used on
// the GPU machine to check the default rates against the CPU targets (docs/PERFORMANCE.md).
//
// --seed-fields reads only what the seed articles' pynvml thread reads from NVML (utilization
// and temperature, every tick, nothing else), for a same-work comparison with it.
//
//   gpumon_bench_sampler_tasks [--hz N] [--seconds S] [--library PATH] [--pcie] [--seed-fields]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "gpu/nvml_backend.h"
#include "sampler/sampler.h"
#include "sampler_window.h"

int main(int argc, char** argv) {
  int hz = 10;
  double seconds = 10;
  bool pcie = false;
  bool seed_fields = false;
  gpumon::NvmlOpenOptions options;
  for (int i = 1; i < argc; ++i) {
    const bool more = i + 1 < argc;
    if (!std::strcmp(argv[i], "--hz") && more) {
      hz = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--seconds") && more) {
      seconds = std::atof(argv[++i]);
    } else if (!std::strcmp(argv[i], "--library") && more) {
      options.library_path = argv[++i];
    } else if (!std::strcmp(argv[i], "--pcie")) {
      pcie = true;
    } else if (!std::strcmp(argv[i], "--seed-fields")) {
      seed_fields = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--hz N] [--seconds S] [--library PATH] [--pcie] [--seed-fields]\n",
                   argv[0]);
      return 2;
    }
  }
  gpumon::NvmlOpenError error;
  std::unique_ptr<gpumon::GpuBackend> backend = gpumon::NvmlBackend::open(options, &error);
  if (!backend) {
    std::fprintf(stderr, "gpumon: %s\n", error.message.c_str());
    return 1;
  }
  const unsigned gpus = backend->device_count();
  gpumon::SamplerConfig config;
  config.interval = std::chrono::milliseconds(1000 / (hz > 0 ? hz : 1));
  config.pcie = pcie;
  if (seed_fields) {
    config.metrics =
        gpumon::MetricSet(gpumon::MetricGroup::kUtilization) | gpumon::MetricGroup::kTemperature;
    config.slow_metrics = {};
    config.utilization_period = std::chrono::milliseconds(0);
    config.energy = config.static_details = config.processes = false;
    config.gpm = config.driver_samples = config.events = false;
  }
  gpumon::Sampler sampler(std::move(backend), config);
  const gpumon::bench::SamplerWindow w = gpumon::bench::measure_window(sampler, seconds);
  const gpumon::SamplerStats& first = w.first;
  const gpumon::SamplerStats& last = w.last;
  const double wall_s = w.wall_s;
  const double cpu_s = w.cpu_s();
  const auto ticks = w.ticks();
  std::printf("{\"hz\": %d, \"gpus\": %u, \"wall_s\": %.3f, \"cpu_s\": %.6f, \"cpu_pct\": %.4f,\n",
              hz, gpus, wall_s, cpu_s, 100.0 * cpu_s / wall_s);
  std::printf(
      " \"ticks\": %llu, \"us_per_tick\": %.2f, \"overruns\": %llu, \"nvml_errors\": %llu,\n",
      static_cast<unsigned long long>(ticks), ticks ? 1e6 * cpu_s / double(ticks) : 0.0,
      static_cast<unsigned long long>(last.overruns - first.overruns),
      static_cast<unsigned long long>(last.nvml_errors));
  std::printf(" \"max_tick_us\": %.1f, \"tasks\": [", last.max_tick_duration_us);
  for (std::size_t i = 0; i < last.tasks.size(); ++i) {
    const gpumon::TaskStats& t = last.tasks[i];
    std::printf(
        "%s\n  {\"name\": \"%s\", \"period_us\": %lld, \"runs\": %llu, \"mean_us\": %.1f, "
        "\"max_us\": %.1f}",
        i ? "," : "", t.name.c_str(), static_cast<long long>(t.period.count()),
        static_cast<unsigned long long>(t.runs), t.mean_cost_us, t.max_cost_us);
  }
  std::printf("]}\n");
  return 0;
}
