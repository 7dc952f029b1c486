// SPDX-License-Identifier: MIT
// Recording size and write cost: records a fake-NVML scenario (default `demo`, 8 H200s
// in DDP training) for the equivalent of an hour at 1 Hz and at 10 Hz, and reports bytes on disk
// per GPU-sample and the writer's CPU per GPU-sample. Target: at most 32 bytes per GPU-sample.
//
// The scenario runs 40 times faster than real time (GPUMON_FAKE_TIME_SCALE); every GPU is read
// with every metric group of the backend, energy once a second (as a sampler would). Tick wall
// times are the nominal schedule plus 0-2 ms of jitter, as a real sampler's are. The writer's
// work is done here the way its thread does it: one transaction per second of samples.
//
//   gpumon_bench_recording [--library PATH] [--scenario NAME] [--minutes N] [--out DIR]
#include <sys/stat.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gpu/nvml_backend.h"
#include "record/recording_batcher.h"
#include "record/recording_store.h"
#include "record/recording_writer.h"

namespace {

using namespace gpumon;
using namespace std::chrono_literals;

double thread_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

struct Result {
  int rate_hz = 0;
  std::uint64_t gpu_samples = 0;
  double bytes = 0;
  double write_cpu_us = 0;    // writer-thread CPU, all batches
  double enqueue_cpu_us = 0;  // producer-side on_tick CPU, all ticks
};

// Records `minutes` of the scenario at `rate_hz` into `path`.
bool record_scenario(const std::string& library, int rate_hz, int minutes, const std::string& path,
                     Result& r) {
  // Scenario time runs 40x real time: a 1 Hz tick every 25 ms, a 10 Hz tick every 2.5 ms.
  constexpr double kScale = 40;
  const auto tick_real = std::chrono::microseconds(static_cast<int>(1e6 / rate_hz / kScale));
  ::setenv("GPUMON_FAKE_TIME_SCALE", std::to_string(kScale).c_str(), 1);
  NvmlOpenOptions options;
  options.library_path = library;
  NvmlOpenError error;
  auto backend = NvmlBackend::open(options, &error);
  if (!backend) {
    std::fprintf(stderr, "cannot open NVML: %s\n", error.message.c_str());
    return false;
  }
  std::vector<DeviceStatic> devices;
  for (unsigned g = 0; g < backend->device_count(); ++g) devices.push_back(backend->device(g));
  std::string err;
  std::vector<record::RecordedDevice> recorded;
  for (const auto& d : devices) recorded.push_back(record::recorded_device(d));
  ::unlink(path.c_str());
  auto store = record::detail::RecordingStore::create(
      path, true, record::make_run_info(backend->system(), "bench", ""), 0, recorded, err);
  if (!store) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return false;
  }
  record::detail::RecordingBatcher batcher(std::move(store), 600, 60s, path);
  // A real writer as well, only to time what the sampler thread pays per tick (it copies).
  record::RecordingOptions sink_options;
  sink_options.path = path + ".sink";
  sink_options.overwrite = true;
  sink_options.flush_interval = 1h;
  sink_options.queue_capacity = 1 << 20;
  auto sink = record::RecordingWriter::create(sink_options, {}, devices, err);

  const int ticks = minutes * 60 * rate_hz;
  const std::int64_t start_ms = 1764446400000;
  std::uint64_t jitter = 88172645463325252ULL;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<TickSample> batch;
  for (int i = 0; i < ticks; ++i) {
    std::this_thread::sleep_until(t0 + i * tick_real);
    TickSample tick;
    jitter ^= jitter << 13, jitter ^= jitter >> 7, jitter ^= jitter << 17;
    const std::int64_t us = (start_ms + std::int64_t{i} * 1000 / rate_hz) * 1000 +
                            static_cast<std::int64_t>(jitter % 2000);
    tick.wall_time = WallClock::time_point(std::chrono::microseconds(us));
    for (unsigned g = 0; g < backend->device_count(); ++g) {
      // Every group; energy (a slow call, 2.4 ms in the scenario) once a second.
      const MetricSet what = i % rate_hz == 0 ? MetricSet::all() : MetricSet::cheap();
      tick.gpus.push_back(backend->sample(g, what));
      tick.gpus.back().wall_time = tick.wall_time;
    }
    const double e0 = thread_cpu_us();
    if (sink) sink->on_tick(tick);
    r.enqueue_cpu_us += thread_cpu_us() - e0;
    r.gpu_samples += tick.gpus.size();
    batch.push_back(std::move(tick));
    if (static_cast<int>(batch.size()) == rate_hz || i + 1 == ticks) {
      const double w0 = thread_cpu_us();
      const std::string failed = batcher.write(batch, {}, {});
      r.write_cpu_us += thread_cpu_us() - w0;
      if (!failed.empty()) {
        std::fprintf(stderr, "%s\n", failed.c_str());
        return false;
      }
      batch.clear();
    }
  }
  batcher.finish();
  sink.reset();
  ::unlink((path + ".sink").c_str());
  struct stat st {};
  ::stat(path.c_str(), &st);
  r.rate_hz = rate_hz;
  r.bytes = static_cast<double>(st.st_size);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string library = GPUMON_BENCH_FAKE_NVML;
  std::string scenario = "demo";
  std::string out_dir = "/tmp";
  int minutes = 60;
  for (int i = 1; i < argc; ++i) {
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : ""; };
    if (!std::strcmp(argv[i], "--library")) {
      library = next();
    } else if (!std::strcmp(argv[i], "--scenario")) {
      scenario = next();
    } else if (!std::strcmp(argv[i], "--minutes")) {
      minutes = std::atoi(next());
    } else if (!std::strcmp(argv[i], "--out")) {
      out_dir = next();
    } else {
      std::fprintf(stderr,
                   "usage: %s [--library PATH] [--scenario NAME] [--minutes N] [--out DIR]\n",
                   argv[0]);
      return 2;
    }
  }
  ::setenv("GPUMON_FAKE_SCENARIO", scenario.c_str(), 1);
  std::printf("scenario %s, %d min of samples per rate\n", scenario.c_str(), minutes);
  std::printf(
      "| rate | GPU-samples | file bytes | bytes / GPU-sample | writer CPU us / GPU-sample |"
      " sampler-side us / tick |\n| --- | --- | --- | --- | --- | --- |\n");
  for (int rate : {1, 10}) {
    Result r;
    const std::string path = out_dir + "/bench-" + std::to_string(rate) + "hz.gpumon";
    if (!record_scenario(library, rate, minutes, path, r)) return 1;
    const double ticks = static_cast<double>(minutes) * 60 * rate;
    std::printf("| %d Hz | %llu | %.0f | %.2f | %.2f | %.2f |\n", rate,
                static_cast<unsigned long long>(r.gpu_samples), r.bytes,
                r.bytes / static_cast<double>(r.gpu_samples),
                r.write_cpu_us / static_cast<double>(r.gpu_samples), r.enqueue_cpu_us / ticks);
    std::fflush(stdout);
  }
  return 0;
}
