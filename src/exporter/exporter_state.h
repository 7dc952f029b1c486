// SPDX-License-Identifier: MIT
// ExporterState: the SampleSink behind `gpumon serve`. It keeps the newest known value of
// every catalog metric of every GPU, XID and ECC event counts and the newest process lists,
// and renders /metrics (Prometheus text 0.0.4), /health and the JSON API from them. Scrapes
// read this state only; they never call NVML (docs/exporter.md).
//
// Freshness: metrics some ticks lack (GPM, driver buffers, energy) keep their last known value
// as sampler/last_known.h rules (until overdue in tick time, then they vanish; a lost GPU
// drops every value but `lost`). Missing values are never written as 0: no
// series in /metrics, null in JSON.
//
// Training ranks (ExporterOptions::training, fed by serve's agent socket on the agent server's
// thread) live in TrainingState under its own lock; each render copies them after mutex_ is
// released, so the two locks are never nested.
//
// Thread-safety: the sink calls come from the sampler thread (and the event stream may call
// on_event from its own thread); every other member is safe from any thread at once.
// Lifetime: the Sampler must outlive every call of a render member.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "exporter/chart_history.h"
#include "exporter/exporter_view.h"
#include "sampler/clock.h"
#include "sampler/sample_sink.h"
#include "sampler/sampler.h"

namespace gpumon::exporter {

struct Health {
  bool ok = false;
  std::string reason;  ///< "ok", or why not (for the 503 body)
};

class ExporterState final : public SampleSink {
 public:
  /// `clock` must be the sampler's clock (ticks are stamped with it); null = SteadyClock.
  ExporterState(const Sampler& sampler, ExporterOptions options,
                std::shared_ptr<Clock> clock = nullptr);

  // SampleSink (sampler thread). Never throw.
  void on_tick(const TickSample& tick) override;
  void on_event(const GpuEvent& event) override;
  void on_processes(const ProcessSnapshot& snapshot) override;

  /// The /metrics body. Rendered again only after new data (a tick, event or process list)
  /// or when the cached body is older than kMaxBodyAge; concurrent scrapes share one body.
  /// So gpumon_last_sample_age_seconds and the HTTP counters are as of the render, at most
  /// kMaxBodyAge old.
  std::shared_ptr<const std::string> metrics_text();
  /// /api/v1/current (docs/exporter.md).
  std::string current_json();
  /// /api/v1/history: the last `seconds` (clamped to >= 0; NaN = 0) of `metrics` (catalog
  /// names and "throttled"; empty = all), columnar. When every one asked for is a chart metric
  /// (ChartHistory::holds), from the chart history (kChartSpan at any GPU count, a row per
  /// second at most); otherwise from the sampler's ticks. Above kMaxHistoryValues values,
  /// every `stride`-th row is kept, and so too past `max_points` rows per GPU (0: no bound).
  /// Throws std::invalid_argument naming an unknown metric.
  std::string history_json(double seconds, const std::vector<std::string>& metrics,
                           std::size_t max_points = 0);
  /// /api/v1/training: the training processes of ExporterOptions::training ({"enabled":
  /// false, "ranks": []} without it).
  std::string training_json();
  /// /api/v1/training/history: the training processes' last `seconds` (TrainingHistory), at
  /// most `max_points` samples each (0: no bound); no ranks without ExporterOptions::training.
  std::string training_history_json(double seconds, std::size_t max_points = 0);
  /// /api/v1/devices: static facts of every GPU and the system.
  std::string devices_json();
  /// ok while the newest tick is younger than 3 intervals + 5 s (before the first tick: while
  /// the state itself is younger than that).
  Health health() const;

  /// For an HTTP layer that counts through the exporter: every answered request (status code)
  /// and every refused one (a short snake_case reason from a fixed set: "busy", ...; past 64
  /// distinct reasons the rest count as "other"). See also ExporterOptions::http_counts.
  void count_request(int code);
  void count_rejected(const std::string& reason);

  const ExporterOptions& options() const { return options_; }

  static constexpr std::chrono::milliseconds kMaxBodyAge{1000};
  static constexpr std::size_t kMaxHistoryValues = 2'000'000;
  /// What the chart history holds: the dashboard's longest window.
  static constexpr std::chrono::seconds kChartSpan{3600};

 private:
  GpuState& gpu_locked(unsigned index);
  static void note_nvlink(GpuState& g, const DeviceSample& s, MonoClock::time_point now);
  void expire_locked(MonoClock::time_point now);
  double tick_age_s_locked(MonoClock::time_point now) const;
  /// Copies the state and the sampler's facts. Takes mutex_ itself (never around Sampler
  /// calls: the sampler calls the sink under its own locks).
  ExporterView make_view();

  const Sampler& sampler_;
  const ExporterOptions options_;
  const std::shared_ptr<Clock> clock_;
  const MonoClock::time_point created_;
  const MonoClock::duration hold_;           // hold_time(interval)
  const MonoClock::duration health_limit_;   // 3 intervals + 5 s
  const MonoClock::duration process_stale_;  // max(hold_, 3 process periods)
  ChartHistory charts_;                      // its own lock

  mutable std::mutex mutex_;  // guards what follows
  std::uint64_t generation_ = 0;
  std::vector<GpuState> gpus_;
  bool have_tick_ = false;
  MonoClock::time_point last_tick_mono_{};
  WallClock::time_point last_tick_wall_{};
  HttpCounts http_;
  std::shared_ptr<const std::string> body_;
  std::uint64_t body_generation_ = 0;
  std::uint64_t body_training_generation_ = 0;
  MonoClock::time_point body_time_{};

  std::mutex render_mutex_;  // one /metrics render at a time; the others wait and share it
};

}  // namespace gpumon::exporter
