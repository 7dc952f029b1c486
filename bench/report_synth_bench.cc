// SPDX-License-Identifier: MIT
// Writes a synthetic recording for the `gpumon report` benchmark (bench/report_bench.sh):
// HOURS hours at RATE_HZ on GPUS H200-like GPUs (default 24 h x 10 Hz x 8 GPUs: 6.9 million
// GPU-samples), through the recording's own batcher, as fast as the encoder goes (not in real
// time). Values move like a training run: utilization and power with noise, a step dip, a
// one-sample spike every 10 minutes, thermal throttling stretches, an energy counter read
// once a second, an XID and a lost GPU near the end.
//
// With --ranks, the recording is one node of a job (bench/job_bench.sh): RANKS ranks, one per
// GPU, rank = NODE x RANKS + GPU, each ending a step STEP_HZ times a second on every node at once
// (lock step) as the node's clock sees it, CLOCK_MS ahead of the true time; rank 13 computes
// 40 % longer (a straggler), and the node's hello names job "bench-job". The XID and the lost
// GPU are left out there: they end the run of one GPU, not the job's.
//
// usage: gpumon_bench_report_synth OUT.gpumon [HOURS] [RATE_HZ] [GPUS]
//          [--ranks RANKS --node NODE --step-hz STEP_HZ --clock-ms CLOCK_MS]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "record/recording_batcher.h"
#include "record/recording_store.h"
#include "training/protocol.h"

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

struct JobNode {
  int ranks = 0;  // 0: not a job's node
  int node = 0;
  double step_hz = 10;
  std::int64_t clock_ms = 0;
};

DeviceSample sample(unsigned g, std::int64_t i, int rate_hz, std::int64_t ticks, Noise& n,
                    double& energy_j, bool job) {
  DeviceSample s;
  s.index = g;
  const std::int64_t sec = i / rate_hz;
  const bool lost = !job && g == 7 && i > ticks - ticks / 100;  // the last 1 % of the run
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

// The steps of the node's ranks that end in [from_ms, to_ms) of the node's clock.
void add_steps(const JobNode& job, std::int64_t start_ms, std::int64_t from_ms, std::int64_t to_ms,
               std::vector<training::Step>& out) {
  const double period = 1 / job.step_hz;
  const double t0 = static_cast<double>(start_ms) / 1000;
  const auto first = static_cast<std::int64_t>(
      std::ceil((static_cast<double>(from_ms - job.clock_ms) / 1000 - t0) / period));
  for (std::int64_t k = std::max<std::int64_t>(first, 1);; ++k) {
    const double end =
        t0 + static_cast<double>(k) * period + static_cast<double>(job.clock_ms) / 1000;
    if (end * 1000 >= static_cast<double>(to_ms)) break;
    for (int l = 0; l < job.ranks; ++l) {
      training::Step s;
      s.pid = 1000 + l, s.rank = job.node * job.ranks + l, s.local_rank = l;
      s.world_size = 16 * job.ranks, s.device = "cuda:" + std::to_string(l);
      s.step = k - 1, s.t_end_s = end, s.t_start_s = end - period;
      s.received_ms = static_cast<std::int64_t>(end * 1000);
      s.cpu_step_s = period, s.data_wait_s = 0.01 * period;
      s.gpu_step_s = (*s.rank == 13 ? 0.9 : 0.6) * period;
      s.allocated_bytes = std::int64_t{60} << 30, s.reserved_bytes = std::int64_t{64} << 30;
      out.push_back(std::move(s));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> pos;
  JobNode job;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : "0";
    if (a == "--ranks")
      job.ranks = std::atoi(v), ++i;
    else if (a == "--node")
      job.node = std::atoi(v), ++i;
    else if (a == "--step-hz")
      job.step_hz = std::atof(v), ++i;
    else if (a == "--clock-ms")
      job.clock_ms = std::atoll(v), ++i;
    else
      pos.push_back(a);
  }
  if (pos.empty()) {
    std::fprintf(stderr,
                 "usage: %s OUT.gpumon [HOURS] [RATE_HZ] [GPUS] [--ranks N --node K --step-hz H "
                 "--clock-ms MS]\n",
                 argv[0]);
    return 2;
  }
  const std::string path = pos[0];
  const double hours = pos.size() > 1 ? std::atof(pos[1].c_str()) : 24;
  const int rate_hz = pos.size() > 2 ? std::atoi(pos[2].c_str()) : 10;
  const unsigned gpus = pos.size() > 3 ? static_cast<unsigned>(std::atoi(pos[3].c_str())) : 8;
  const auto ticks = static_cast<std::int64_t>(hours * 3600 * rate_hz);
  const std::int64_t start_ms = 1764446400000 + job.clock_ms;

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
  char host[32];
  std::snprintf(host, sizeof host, "node-%02d", job.node);
  const record::RunInfo run{job.ranks ? host : "bench-host", "bench", "python3 train.py",
                            "580.159.04", "synthetic"};
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
  std::vector<training::Step> steps;
  std::vector<training::RankEvent> hellos;
  for (int l = 0; l < job.ranks; ++l) {
    const std::int64_t rank = job.node * job.ranks + l;
    hellos.push_back(training::rank_event(
        start_ms, 1000 + l, rank, "hello",
        R"({"type":"hello","pid":)" + std::to_string(1000 + l) + R"(,"rank":)" +
            std::to_string(rank) + R"(,"world_size":)" + std::to_string(16 * job.ranks) +
            R"(,"device":"cuda:)" + std::to_string(l) + R"(","pci_bus_id":"00000000:)" +
            std::to_string(10 + l) + R"(:00.0","job":{"id":"bench-job"}})"));
  }
  std::int64_t steps_to_ms = start_ms;
  for (std::int64_t i = 0; i < ticks; ++i) {
    TickSample t;
    t.wall_time = WallClock::time_point(std::chrono::milliseconds(start_ms + i * 1000 / rate_hz));
    for (unsigned g = 0; g < gpus; ++g) {
      t.gpus.push_back(sample(g, i, rate_hz, ticks, noise[g], energy[g], job.ranks > 0));
      t.gpus.back().wall_time = t.wall_time;
    }
    if (!job.ranks && gpus > 7 && i == ticks - ticks / 100) {
      GpuEvent e{7, GpuEvent::Kind::kXid, 79, t.wall_time, {}};
      events.push_back(e);
      e.kind = GpuEvent::Kind::kLost;
      events.push_back(e);
    }
    batch.push_back(std::move(t));
    if (batch.size() == 600 || i + 1 == ticks) {
      if (job.ranks) {
        const std::int64_t to = start_ms + (i + 1) * 1000 / rate_hz;
        add_steps(job, start_ms - job.clock_ms, steps_to_ms, to, steps);
        steps_to_ms = to;
      }
      if (auto failed = batcher.write(batch, events, {}, steps, hellos); !failed.empty()) {
        std::fprintf(stderr, "%s\n", failed.c_str());
        return 1;
      }
      batch.clear();
      events.clear();
      steps.clear();
      hellos.clear();
    }
  }
  batcher.finish();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s: %lld ticks x %u GPUs = %lld GPU-samples written in %.1f s\n", path.c_str(),
              static_cast<long long>(ticks), gpus, static_cast<long long>(ticks) * gpus, s);
  return 0;
}
