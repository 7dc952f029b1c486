// SPDX-License-Identifier: MIT
// CPU cost of the Sampler thread on the fake NVML, by GPU count and rate: 8, 64 and 256 GPUs
// (scenarios demo, many-gpus-64, many-gpus-256) at 10 Hz and 100 Hz, every built-in task on
// (metrics every tick, energy every 1 s, processes every 2 s, static details once). Arms are
// interleaved in blocks, the order rotated every block; "8 GPUs 10 Hz (control)" repeats the
// first arm as the noise floor. CPU is the sampler thread's CLOCK_THREAD_CPUTIME_ID.
//
// --metrics-only keeps just the every-tick metrics read (the scale of the per-tick path).
// Measured from the end of the first tick, so one-off costs are left out.
//
//   gpumon_bench_sampler [--library PATH] [--blocks N] [--seconds S] [--metrics-only]
//                        [--out FILE.json]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "gpu/nvml_backend.h"
#include "sampler/sampler.h"
#include "sampler_window.h"

namespace {

struct Arm {
  std::string name;
  const char* scenario;
  int hz;
  std::vector<double> cpu_pct;        // of one core, per block
  std::vector<double> us_per_sample;  // CPU per GPU-sample, per block
  std::vector<double> overruns;
};

// One block of one arm: open the scenario, start sampling, and measure from the end of the
// first tick (static details and first reads are one-off costs) for `seconds`.
bool run_block(Arm& arm, const std::string& library, double seconds, bool all_tasks) {
  setenv("GPUMON_FAKE_SCENARIO", arm.scenario, 1);
  gpumon::NvmlOpenOptions options;
  options.library_path = library;
  gpumon::NvmlOpenError error;
  std::unique_ptr<gpumon::GpuBackend> backend = gpumon::NvmlBackend::open(options, &error);
  if (!backend) {
    std::fprintf(stderr, "gpumon: %s\n", error.message.c_str());
    return false;
  }
  const unsigned gpus = backend->device_count();
  gpumon::SamplerConfig config;
  config.interval = std::chrono::milliseconds(1000 / arm.hz);
  if (!all_tasks) config.energy = config.processes = config.static_details = false;
  gpumon::Sampler sampler(std::move(backend), config);
  const gpumon::bench::SamplerWindow w = gpumon::bench::measure_window(sampler, seconds);
  const auto samples = static_cast<double>(w.ticks() * gpus);
  arm.cpu_pct.push_back(100.0 * w.cpu_s() / w.wall_s);
  arm.us_per_sample.push_back(samples > 0 ? 1e6 * w.cpu_s() / samples : 0);
  arm.overruns.push_back(static_cast<double>(w.last.overruns - w.first.overruns));
  return true;
}

void print_row(const Arm& arm) {
  using gpumon::bench::bootstrap_median_ci;
  using gpumon::bench::median;
  const auto [c_lo, c_hi] = bootstrap_median_ci(arm.cpu_pct);
  const auto [u_lo, u_hi] = bootstrap_median_ci(arm.us_per_sample);
  std::printf("%-26s %8.2f [%6.2f, %6.2f] %8.2f [%6.2f, %6.2f] %9.1f\n", arm.name.c_str(),
              median(arm.cpu_pct), c_lo, c_hi, median(arm.us_per_sample), u_lo, u_hi,
              median(arm.overruns));
}

void write_json(const std::string& path, const std::vector<Arm>& arms, int blocks, double secs) {
  std::ofstream out(path);
  out << "{\"blocks\":" << blocks << ",\"seconds_per_block\":" << secs << ",\"arms\":[";
  auto list = [&](const std::vector<double>& v) {
    out << "[";
    for (std::size_t i = 0; i < v.size(); ++i) out << (i ? "," : "") << v[i];
    out << "]";
  };
  for (std::size_t k = 0; k < arms.size(); ++k) {
    out << (k ? "," : "") << "{\"name\":\"" << arms[k].name << "\",\"scenario\":\""
        << arms[k].scenario << "\",\"hz\":" << arms[k].hz << ",\"cpu_pct\":";
    list(arms[k].cpu_pct);
    out << ",\"cpu_us_per_gpu_sample\":";
    list(arms[k].us_per_sample);
    out << ",\"overruns\":";
    list(arms[k].overruns);
    out << "}";
  }
  out << "]}\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::string library;
  std::string out_path;
  int blocks = 20;
  double seconds = 0.5;
  bool all_tasks = true;
  for (int i = 1; i < argc; ++i) {
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : ""; };
    if (!std::strcmp(argv[i], "--library")) {
      library = next();
    } else if (!std::strcmp(argv[i], "--blocks")) {
      blocks = std::atoi(next());
    } else if (!std::strcmp(argv[i], "--seconds")) {
      seconds = std::atof(next());
    } else if (!std::strcmp(argv[i], "--metrics-only")) {
      all_tasks = false;
    } else if (!std::strcmp(argv[i], "--out")) {
      out_path = next();
    } else {
      std::fprintf(stderr,
                   "usage: %s [--library PATH] [--blocks N] [--seconds S] [--metrics-only]\n"
                   "       [--out F]\n",
                   argv[0]);
      return 2;
    }
  }
  if (blocks < 2 || !(seconds > 0)) {
    std::fprintf(stderr, "--blocks must be >= 2 and --seconds > 0\n");
    return 2;
  }
  if (library.empty()) {
    const char* env = std::getenv("GPUMON_NVML_LIBRARY");
    library = env != nullptr ? env : "libnvidia-ml.so.1";
  }

  std::vector<Arm> arms = {
      {"8 GPUs 10 Hz", "demo", 10, {}, {}, {}},
      {"8 GPUs 100 Hz", "demo", 100, {}, {}, {}},
      {"64 GPUs 10 Hz", "many-gpus-64", 10, {}, {}, {}},
      {"64 GPUs 100 Hz", "many-gpus-64", 100, {}, {}, {}},
      {"256 GPUs 10 Hz", "many-gpus-256", 10, {}, {}, {}},
      {"256 GPUs 100 Hz", "many-gpus-256", 100, {}, {}, {}},
      {"8 GPUs 10 Hz (control)", "demo", 10, {}, {}, {}},
  };
  for (int b = 0; b < blocks; ++b) {
    for (std::size_t k = 0; k < arms.size(); ++k) {
      if (!run_block(arms[(k + static_cast<std::size_t>(b)) % arms.size()], library, seconds,
                     all_tasks)) {
        return 1;
      }
    }
  }
  std::printf(
      "sampler thread CPU, fake NVML (%s), %s, %d blocks x %.2f s per arm, medians "
      "[95%% CI]\n",
      library.c_str(), all_tasks ? "all tasks" : "metrics only", blocks, seconds);
  std::printf("%-26s %26s %26s %9s\n", "arm", "cpu % of one core", "cpu us per GPU-sample",
              "overruns");
  for (const Arm& arm : arms) print_row(arm);
  if (!out_path.empty()) write_json(out_path, arms, blocks, seconds);
  return 0;
}
