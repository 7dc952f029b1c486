// SPDX-License-Identifier: MIT
// LiveWindow: the recent past of a live run (GPU samples, GPU events, process stretches, steps,
// rank events) from which LiveDiagnoser builds RunData. prune() drops what is older than `span`
// before the newest item, except each connected process's hello and its last `kept_steps`
// steps, kept however old until the process leaves: its rank keeps its GPU, and a rank that
// stopped stepping still shows as a hang after the window has moved past its last step.
//
// Bounded memory whatever the GPU count or rates: at most `max_points` GPU samples in all
// (shared evenly between the GPUs seen; a GPU over its share loses its oldest samples, so a very
// fast sampler shortens the window rather than growing it), `max_steps` steps, `max_events`
// GPU events, `max_rank_events` rank events, `max_processes` process stretches, and per process
// (at most `max_ranks`) one hello and `kept_steps` steps. With the defaults (48,000 points of
// ~330 bytes, 48,000 + 1,024 x 32 steps of ~260 bytes) that is about 40 MB at most.
//
// Thread-safety: none; LiveDiagnoser guards it with its mutex.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <map>
#include <utility>
#include <vector>

#include "diagnose/run_data.h"
#include "gpu/gpu_types.h"
#include "sampler/sample_sink.h"

namespace gpumon::diagnose {

struct LiveWindowLimits {
  std::chrono::milliseconds span{10 * 60 * 1000};
  std::size_t max_points = 48000;  ///< all GPUs together: 8 GPUs x 10 Hz x 10 min
  std::size_t max_steps = 48000;   ///< all ranks together: 8 ranks x 10 steps/s x 10 min
  std::size_t max_events = 1024;
  std::size_t max_rank_events = 4096;
  std::size_t max_ranks = 1024;  ///< processes whose hello is kept however old it is
  std::size_t max_processes = 1024;
  std::size_t kept_steps = 32;  ///< per process that has not left (bounded by max_ranks)
  /// Process samples (one a second per process): 8 ranks x 10 min, ~150 bytes each.
  std::size_t max_process_samples = 4800;
};

class LiveWindow {
 public:
  explicit LiveWindow(LiveWindowLimits limits = {}) : limits_(limits) {}

  /// Static facts (name, PCI bus id, memory total, max SM clock) of the GPUs.
  void set_devices(const std::vector<DeviceStatic>& devices);
  void add_tick(const TickSample& tick);
  void add_event(const GpuEvent& event);
  void add_processes(const ProcessSnapshot& snapshot);
  void add_step(const training::Step& step);
  void add_rank_event(const training::RankEvent& event);
  void add_process_sample(const training::ProcessSample& sample);

  /// Drops what is older than the newest item's time minus the span.
  void prune();
  /// The window as RunData (source "live", finish_run_data applied).
  RunData run_data() const;

  std::size_t points() const { return points_; }
  std::size_t steps() const { return steps_.size(); }
  /// ms since the epoch of the newest item (0 before any).
  std::int64_t newest_ms() const { return newest_ms_; }

 private:
  void seen(std::int64_t ms) { newest_ms_ = std::max(newest_ms_, ms); }
  GpuSeries& series(unsigned gpu);

  LiveWindowLimits limits_;
  std::int64_t newest_ms_ = 0;
  std::vector<GpuSeries> statics_;  // points unused: the static part of each GPU
  std::map<unsigned, std::deque<GpuPoint>> points_by_gpu_;
  std::size_t points_ = 0;
  std::deque<record::RecordedEvent> events_;
  std::map<std::pair<unsigned, unsigned>, record::RecordedProcess> processes_;  // (gpu, pid)
  std::deque<training::Step> steps_;
  std::deque<training::RankEvent> rank_events_;              // without hellos
  std::map<std::int64_t, training::RankEvent> hellos_;       // by pid: the latest
  std::map<std::int64_t, std::deque<training::Step>> kept_;  // by pid: aged-out steps
  std::deque<training::ProcessSample> process_samples_;
};

/// One GPU sample as a raw RunData point.
GpuPoint live_point(const DeviceSample& s);

}  // namespace gpumon::diagnose
