// SPDX-License-Identifier: MIT
// Writes a synthetic recording for the `gpumon report` benchmark (bench/report_bench.sh):
// HOURS hours at RATE_HZ on GPUS H200-like GPUs (default 24 h x 10 Hz x 8 GPUs: 6.9 million
// GPU-samples), through the recording's own batcher, as fast as the encoder goes (not in real
// time). Values move like a training run: utilization and power with noise, a step dip, a
// one-sample spike every 10 minutes, thermal throttling stretches, an energy counter read
// once a second, an XID and a lost GPU near the end.
//
// usage: gpumon_bench_report_synth OUT.gpumon [HOURS] [RATE_HZ] [GPUS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "record/recording_batcher.h"
#include "record/recording_store.h"

using namespace gpumon;
using namespace std::chrono_literals;

namespace {

struct Noise {
  std::uint64_t s = 88172645463325252ULL;
  double next() {  // uniform in [0, 1)
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    return static_cast<double>(s >> 11) / 9007199254740992.0;
  }
};

DeviceSample sample(unsigned g, std::int64_t i, int rate_hz, std::int64_t ticks, Noise& n,
                    double& energy_j) {
  DeviceSample s;
  s.index = g;
  const std::int64_t sec = i / rate_hz;
  const bool lost = g == 7 && i > ticks - ticks / 100;  // the last 1 % of the run
  if (lost) {
    s.lost = true;
    return s;
  }
  const bool dip = i % (8 * rate_hz / 10 + 1) == 0;  // a short dip at each ~0.8 s step
  const bool spike = i % (600 * rate_hz) == 300 * rate_hz + g;
  const bool hot = g == 5 && sec % 600 < 120;  // throttles 2 min out of 10
  const double util = dip ? 20 + 10 * n.next() : spike ? 100 : 85 + 14 * n.next();
  s.utilization_gpu_pct = static_cast<unsigned>(util);
  s.utilization_memory_pct = static_cast<unsigned>(40 + 20 * n.next());
  s.memory_total_bytes = std::uint64_t{150754820096};
  s.memory_used_bytes = std::uint64_t{126000000000} + static_cast<std::uint64_t>(n.next() * 2e9);
  s.memory_free_bytes = *s.memory_total_bytes - *s.memory_used_bytes;
  s.temperature_gpu_c = static_cast<unsigned>((hot ? 84 : 62) + 4 * n.next());
  const double power = spike ? 699.0 : dip ? 350 + 50 * n.next() : 560 + 120 * n.next();
  s.power_draw_w = power;
  s.power_limit_w = 700.0;
  energy_j += power / rate_hz;
  if (i % rate_hz == 0) s.energy_mj = static_cast<std::uint64_t>(energy_j * 1000);
  s.sm_clock_mhz = hot ? 1755u : 1980u;
  s.mem_clock_mhz = 3201u;
  s.graphics_clock_mhz = *s.sm_clock_mhz;
  s.pstate = 0u;
  s.clock_event_reasons = hot ? std::uint64_t{kClockEventSwThermalSlowdown} : std::uint64_t{0};
  s.sm_active_ratio = util / 100 * (0.7 + 0.2 * n.next());
  s.tensor_active_ratio = util / 100 * (0.4 + 0.2 * n.next());
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT.gpumon [HOURS] [RATE_HZ] [GPUS]\n", argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  const double hours = argc > 2 ? std::atof(argv[2]) : 24;
  const int rate_hz = argc > 3 ? std::atoi(argv[3]) : 10;
  const unsigned gpus = argc > 4 ? static_cast<unsigned>(std::atoi(argv[4])) : 8;
  const auto ticks = static_cast<std::int64_t>(hours * 3600 * rate_hz);
  const std::int64_t start_ms = 1764446400000;

  std::vector<record::RecordedDevice> devices;
  for (unsigned g = 0; g < gpus; ++g) {
    record::RecordedDevice d;
    d.index = g;
    d.name = "NVIDIA H200";
    d.pci_bus_id = "00000000:" + std::to_string(10 + g) + ":00.0";
    d.memory_total_bytes = 150754820096;
    devices.push_back(d);
  }
  std::string err;
  const record::RunInfo run{"bench-host", "bench", "python3 train.py", "580.159.04", "synthetic"};
  auto store = record::detail::RecordingStore::create(path, false, run, start_ms, devices, err);
  if (!store) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return 1;
  }
  record::detail::RecordingBatcher batcher(std::move(store), 600, 60s, path);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<Noise> noise(gpus);
  for (unsigned g = 0; g < gpus; ++g) noise[g].s += g * 7919;
  std::vector<double> energy(gpus, 3.6e9);
  std::vector<TickSample> batch;
  std::vector<GpuEvent> events;
  for (std::int64_t i = 0; i < ticks; ++i) {
    TickSample t;
    t.wall_time = WallClock::time_point(std::chrono::milliseconds(start_ms + i * 1000 / rate_hz));
    for (unsigned g = 0; g < gpus; ++g) {
      t.gpus.push_back(sample(g, i, rate_hz, ticks, noise[g], energy[g]));
      t.gpus.back().wall_time = t.wall_time;
    }
    if (gpus > 7 && i == ticks - ticks / 100) {
      GpuEvent e{7, GpuEvent::Kind::kXid, 79, t.wall_time, {}};
      events.push_back(e);
      e.kind = GpuEvent::Kind::kLost;
      events.push_back(e);
    }
    batch.push_back(std::move(t));
    if (batch.size() == 600 || i + 1 == ticks) {
      if (auto failed = batcher.write(batch, events, {}); !failed.empty()) {
        std::fprintf(stderr, "%s\n", failed.c_str());
        return 1;
      }
      batch.clear();
      events.clear();
    }
  }
  batcher.finish();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s: %lld ticks x %u GPUs = %lld GPU-samples written in %.1f s\n", path.c_str(),
              static_cast<long long>(ticks), gpus, static_cast<long long>(ticks) * gpus, s);
  return 0;
}
