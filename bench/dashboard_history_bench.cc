// SPDX-License-Identifier: MIT
// The dashboard's history at scale (docs/performance-details.md, "The dashboard's hour"): an
// ExporterState filled with an hour of 1 Hz ticks of 64 GPUs, as `gpumon serve` would hold
// after an hour, then
//   - the time to render /api/v1/history for the dashboard's metrics over the hour (median of
//     7, with its size),
//   - training ranks (as many as GPUs unless --ranks), each sending 10 steps a second for the hour:
//   the cost of
//     a step in TrainingState (the agent thread's share) and the time to render
//     /api/v1/training/history over the hour (median of 7, with its size), and
//   - with --serve ADDR, serve's real routes (HTTP server, state, dashboard page) on ADDR with
//     a tick a second, until SIGINT/SIGTERM, for
//     web/test/test_dashboard_chromium.py --base-url http://ADDR (first render end to end).
// The sampler is not started: it gives the fake GPUs' static facts; the ticks are synthetic,
// stamped back from now so the page's window holds them.
//
// usage: gpumon_bench_dashboard_history [--gpus N] [--ranks R] [--seconds S] [--serve HOST:PORT]
// (R training ranks, default N; 0: none, the page then has no training section)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "cli/serve_routes.h"
#include "exporter/exporter_state.h"
#include "exporter/training_state.h"
#include "gpu/metric_catalog.h"
#include "http/http_server.h"
#include "sampler/testing/fake_backend.h"
#include "sampler/testing/fake_clock.h"
#include "util/stop_signals.h"

namespace {

using namespace gpumon;
using std::chrono::seconds;

// One GPU's readings at second `t`: slow waves, a phase per GPU (so the overview's lines cross
// every height), GPU 13 throttling now and then.
DeviceSample reading(unsigned gpu, long t) {
  DeviceSample s;
  s.index = gpu;
  const double wave = std::sin(static_cast<double>(t) / 60.0 + gpu);
  set_metric_value(s, MetricId::kUtilizationGpuPct, std::round(50 + 45 * wave));
  set_metric_value(s, MetricId::kSmActiveRatio, 0.8 + 0.1 * wave);
  set_metric_value(s, MetricId::kMemoryTotalBytes, 150754820096.0);
  set_metric_value(s, MetricId::kMemoryUsedBytes, 1e11 + 1e9 * wave);
  set_metric_value(s, MetricId::kPowerDrawW, 600 + 50 * wave);
  set_metric_value(s, MetricId::kPowerLimitW, 700);
  set_metric_value(s, MetricId::kPowerMaxW, 690 + 10 * wave);
  set_metric_value(s, MetricId::kTemperatureGpuC, std::round(60 + 5 * wave));
  set_metric_value(s, MetricId::kTemperatureMemoryC, std::round(55 + 5 * wave));
  const bool throttled = gpu == 13 && t % 300 < 60;
  set_metric_value(s, MetricId::kSmClockMhz, throttled ? 1200 : 1980);
  set_metric_value(s, MetricId::kMemClockMhz, 3201);
  set_metric_value(s, MetricId::kClockEventReasons,
                   throttled ? static_cast<double>(kClockEventSwThermalSlowdown) : 0);
  return s;
}

// What the dashboard asks for in a 1400 px wide window: two samples per pixel of its 325 px
// charts (chartWidthPx in web/dashboard/dashboard.js).
constexpr std::size_t kPoints = 650;

TickSample tick(unsigned gpus, long t, MonoClock::time_point mono, WallClock::time_point wall) {
  TickSample k;
  k.mono_time = mono;
  k.wall_time = wall;
  for (unsigned g = 0; g < gpus; ++g) k.gpus.push_back(reading(g, t));
  return k;
}

}  // namespace

int main(int argc, char** argv) {
  unsigned gpus = 64;
  std::optional<unsigned> ranks;
  long span_s = 3600;
  std::string serve;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--gpus") == 0 && has_value) {
      gpus = static_cast<unsigned>(std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--ranks") == 0 && has_value) {
      ranks = static_cast<unsigned>(std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--seconds") == 0 && has_value) {
      span_s = std::atol(argv[++i]);
    } else if (std::strcmp(argv[i], "--serve") == 0 && has_value) {
      serve = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: gpumon_bench_dashboard_history [--gpus N] [--ranks R] [--seconds S] "
                   "[--serve HOST:PORT]\n");
      return 2;
    }
  }
  if (gpus == 0 || span_s <= 0) {
    std::fprintf(stderr, "--gpus and --seconds take numbers > 0\n");
    return 2;
  }
  auto fake_clock = std::make_shared<testing::FakeClock>();
  SamplerConfig config;
  config.processes = false;
  Sampler sampler(std::make_unique<testing::FakeBackend>(gpus, fake_clock), config, fake_clock);
  exporter::ExporterOptions options;
  options.version = "bench";
  options.training = std::make_shared<exporter::TrainingState>(fake_clock);
  auto state = std::make_shared<exporter::ExporterState>(sampler, options);

  const auto mono0 = MonoClock::now();
  const auto wall0 = WallClock::now();
  for (long t = 0; t < span_s; ++t) {
    const auto back = seconds(span_s - 1 - t);
    state->on_tick(tick(gpus, t, mono0 - back, wall0 - back));
  }

  std::vector<std::string> metrics;
  for (MetricId id : exporter::ChartHistory::metrics()) metrics.emplace_back(metric_info(id).name);
  metrics.emplace_back("throttled");
  std::vector<double> ms;
  std::size_t bytes = 0;
  for (int run = 0; run < 7; ++run) {
    const auto start = std::chrono::steady_clock::now();
    bytes = state->history_json(static_cast<double>(span_s), metrics, kPoints).size();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::printf(
      "history of %u GPUs x %ld s, the dashboard's %zu columns, points=%zu: %.1f ms (median of "
      "7, min %.1f), %.1f MB\n",
      gpus, span_s, metrics.size(), kPoints, bench::median(ms),
      *std::min_element(ms.begin(), ms.end()), static_cast<double>(bytes) / 1e6);

  // The training ranks: a rank per GPU, 10 steps a second, waits measured, the allocator read
  // every step (the most a client sends).
  const double wall_now = std::chrono::duration<double>(wall0.time_since_epoch()).count();
  training::Step step;
  const auto feed_start = std::chrono::steady_clock::now();
  std::size_t steps = 0;
  const unsigned rank_count = ranks.value_or(gpus);
  for (long t = 0; t < span_s * 10 && rank_count > 0; ++t) {
    for (unsigned r = 0; r < rank_count; ++r) {
      step.pid = 1000 + r, step.rank = r, step.step = t;
      step.cpu_step_s = 0.1 + 0.01 * std::sin(static_cast<double>(t) / 100 + r);
      step.t_end_s = wall_now - static_cast<double>(span_s) + static_cast<double>(t) / 10;
      step.t_start_s = step.t_end_s - step.cpu_step_s;
      step.data_wait_s = 0.01;
      step.allocated_bytes = 30'000'000'000 + t;
      step.reserved_bytes = 40'000'000'000;
      options.training->on_step(step);
      ++steps;
    }
  }
  const double feed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - feed_start).count();
  std::vector<double> training_ms;
  for (int run = 0; run < 7; ++run) {
    const auto start = std::chrono::steady_clock::now();
    bytes = state->training_history_json(static_cast<double>(span_s), kPoints).size();
    training_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::printf(
      "training: %zu steps of %u ranks in %.2f s (%.2f us a step); history of the %ld s, "
      "points=%zu: %.1f ms (median of 7, min %.1f), %.1f MB\n",
      steps, rank_count, feed_s,
      feed_s / static_cast<double>(std::max<std::size_t>(steps, 1)) * 1e6, span_s, kPoints,
      bench::median(training_ms), *std::min_element(training_ms.begin(), training_ms.end()),
      static_cast<double>(bytes) / 1e6);
  if (serve.empty()) return 0;

  util::ScopedStopSignals signals;
  ServerOptions server_options;
  server_options.listen_address = serve;
  server_options.paths = cli::serve_paths();
  HttpServer server(server_options, cli::make_serve_handler(state));
  if (std::string error = server.start(); !error.empty()) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  std::printf("serving on port %u\n", static_cast<unsigned>(server.port()));
  std::fflush(stdout);
  for (long t = span_s;; ++t) {
    if (!util::ScopedStopSignals::sleep_until(std::chrono::steady_clock::now() + seconds(1))) break;
    state->on_tick(tick(gpus, t, MonoClock::now(), WallClock::now()));
  }
  server.stop();
  return 0;
}
