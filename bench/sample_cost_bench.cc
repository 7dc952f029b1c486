// SPDX-License-Identifier: MIT
// CPU cost of one full sample of the cheap fields: gpumon's NvmlBackend against the same NVML
// calls made from plain C (raw_nvml.c), interleaved in blocks with a raw-vs-raw negative
// control. Target: gpumon within 1.3x of raw.
//
//   gpumon_bench_sample [--library PATH] [--blocks N] [--samples N] [--out FILE.json]
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "gpu/nvml_backend.h"
#include "raw_nvml.h"

namespace {

double thread_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// CPU microseconds per call of `fn`, averaged over `samples` calls.
double measure(const std::function<void()>& fn, int samples) {
  const double t0 = thread_cpu_us();
  for (int i = 0; i < samples; ++i) fn();
  return (thread_cpu_us() - t0) / samples;
}

struct Arm {
  const char* name;
  std::function<void()> fn;
  std::vector<double> per_block_us;
};

}  // namespace

int main(int argc, char** argv) {
  std::string library;
  std::string out_path;
  int blocks = 30;
  int samples = 200;
  for (int i = 1; i < argc; ++i) {
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : ""; };
    if (!std::strcmp(argv[i], "--library"))
      library = next();
    else if (!std::strcmp(argv[i], "--blocks"))
      blocks = std::atoi(next());
    else if (!std::strcmp(argv[i], "--samples"))
      samples = std::atoi(next());
    else if (!std::strcmp(argv[i], "--out"))
      out_path = next();
    else {
      std::fprintf(stderr, "usage: %s [--library PATH] [--blocks N] [--samples N] [--out F]\n",
                   argv[0]);
      return 2;
    }
  }
  if (blocks < 2 || samples < 1) {
    std::fprintf(stderr, "--blocks must be >= 2 and --samples >= 1\n");
    return 2;
  }
  if (library.empty()) {
    const char* env = std::getenv("GPUMON_NVML_LIBRARY");
    library = env != nullptr ? env : "libnvidia-ml.so.1";
  }

  gpumon::NvmlOpenError error;
  gpumon::NvmlOpenOptions options;
  options.library_path = library;
  auto backend = gpumon::NvmlBackend::open(options, &error);
  if (!backend) {
    std::fprintf(stderr, "gpumon: %s\n", error.message.c_str());
    return 1;
  }
  const int raw_devices = raw_nvml_open(library.c_str());
  if (raw_devices < 0 || static_cast<unsigned>(raw_devices) != backend->device_count()) {
    std::fprintf(stderr, "raw NVML baseline could not open %s\n", library.c_str());
    return 1;
  }
  const unsigned n = backend->device_count();
  const auto cheap = gpumon::MetricSet::cheap();

  std::vector<Arm> arms = {
      {"raw_c", [] { raw_nvml_sample_all(); }, {}},
      {"gpumon_backend",
       [&] {
         for (unsigned d = 0; d < n; ++d) backend->sample(d, cheap);
       },
       {}},
      {"raw_c_control", [] { raw_nvml_sample_all(); }, {}},
  };
  for (auto& arm : arms) measure(arm.fn, samples);  // warm-up
  for (int b = 0; b < blocks; ++b) {
    for (std::size_t k = 0; k < arms.size(); ++k) {  // rotate the order every block
      Arm& arm = arms[(k + static_cast<std::size_t>(b)) % arms.size()];
      arm.per_block_us.push_back(measure(arm.fn, samples));
    }
  }

  auto ratio = [&](std::size_t num, std::size_t den) {
    std::vector<double> r;
    for (int b = 0; b < blocks; ++b)
      r.push_back(arms[num].per_block_us[b] / arms[den].per_block_us[b]);
    return r;
  };
  const auto gpumon_ratio = ratio(1, 0);
  const auto control_ratio = ratio(2, 0);
  const auto [g_lo, g_hi] = gpumon::bench::bootstrap_median_ci(gpumon_ratio);
  const auto [c_lo, c_hi] = gpumon::bench::bootstrap_median_ci(control_ratio);

  std::printf("devices=%u blocks=%d samples/block=%d library=%s%s\n", n, blocks, samples,
              library.c_str(), backend->system().simulated_scenario.empty() ? "" : " (SIMULATED)");
  std::printf("%-16s %14s %14s\n", "arm", "cpu_us/sample", "cpu_us/gpu");
  for (const auto& arm : arms) {
    const double m = gpumon::bench::median(arm.per_block_us);
    std::printf("%-16s %14.2f %14.2f\n", arm.name, m, m / n);
  }
  std::printf("gpumon/raw  median %.3f  95%% CI [%.3f, %.3f]  (target <= 1.3)\n",
              gpumon::bench::median(gpumon_ratio), g_lo, g_hi);
  std::printf("control/raw median %.3f  95%% CI [%.3f, %.3f]  (noise floor)\n",
              gpumon::bench::median(control_ratio), c_lo, c_hi);

  if (!out_path.empty()) {
    std::ofstream out(out_path);
    out << "{\"devices\":" << n << ",\"blocks\":" << blocks << ",\"samples_per_block\":" << samples
        << ",\"arms\":{";
    for (std::size_t k = 0; k < arms.size(); ++k) {
      out << (k ? "," : "") << "\"" << arms[k].name << "\":[";
      for (std::size_t b = 0; b < arms[k].per_block_us.size(); ++b)
        out << (b ? "," : "") << arms[k].per_block_us[b];
      out << "]";
    }
    out << "}}\n";
  }
  return 0;
}
