// SPDX-License-Identifier: MIT
// TrainingState: what `gpumon serve` knows of the training processes attached to its agent
// socket (docs/exporter.md, "Training metrics"): per process, step counts and time sums, the
// newest step's allocator figures, and whether it is still connected. Fed by the agent
// server's StepSink; read by the /metrics and
// /api/v1/training renderers through snapshot().
//
// Bounds: at most kMaxRanks processes are tracked (a newcomer beyond that first evicts the
// longest-disconnected one, else is ignored and counted); a process that said bye or
// disconnected is kept for kStaleAfter, then removed.
//
// Thread-safety: every member is safe from any thread at once (one mutex; the sinks only copy
// a few numbers under it, so the agent thread never waits on a render).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "exporter/training_history.h"
#include "gpu/gpu_types.h"
#include "sampler/clock.h"
#include "training/training_types.h"

namespace gpumon::exporter {

/// Upper bounds (seconds) of the step-time histogram's buckets, +Inf implied: from a 5 ms step
/// of a small model to a two-minute step of a large one, about 2.5x apart, so that
/// histogram_quantile() across ranks and nodes lands within one bucket's width.
inline constexpr std::array<double, 14> kStepSecondsBuckets = {
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120};

/// One training process as of a snapshot. Times in seconds, sizes in bytes.
struct TrainingRank {
  std::int64_t pid = 0;
  std::optional<std::int64_t> rank;  ///< RANK, as the process sent it
  std::optional<std::int64_t> local_rank;
  std::optional<std::int64_t> world_size;
  std::optional<std::string> device;      ///< torch's name ("cuda:0"); not an NVML index
  std::optional<std::string> pci_bus_id;  ///< from the hello, when the client sent it
  std::optional<unsigned> gpu;            ///< NVML index (training/rank_device.h); else none
  job::JobIdentity job;                   ///< from the hello: what its job_id label comes from
  bool connected = true;                  ///< false after a bye or a disconnect
  /// Its connection ended without a bye (crashed, killed, dropped by the agent): a clean exit
  /// says bye first (docs/python.md).
  bool lost = false;
  std::uint64_t steps = 0;
  std::optional<std::int64_t> last_step;  ///< the newest step's number
  double step_seconds_sum = 0;            ///< CPU wall time of every step
  /// Steps per bucket of kStepSecondsBuckets (not cumulative); the last counts those above
  /// the largest bound.
  std::array<std::uint64_t, kStepSecondsBuckets.size() + 1> step_seconds_buckets{};
  std::optional<double> last_step_seconds;
  /// Over the steps that measured their wait; none until one did (training_types.h).
  std::optional<double> data_wait_seconds_sum;
  std::uint64_t gpu_steps = 0;  ///< steps that carried a GPU time
  double gpu_step_seconds_sum = 0;
  std::optional<double> last_gpu_step_seconds;
  // From the newest step that carried each one.
  std::optional<std::int64_t> allocated_bytes;
  std::optional<std::int64_t> reserved_bytes;
  std::optional<std::int64_t> inactive_split_bytes;
  std::optional<std::int64_t> alloc_retries;
  std::optional<std::int64_t> ooms;
  std::optional<double> last_step_age_s;  ///< since the newest step arrived; none before one
  /// When the newest step arrived, on the agent's wall clock (Unix seconds); none before one.
  std::optional<double> last_step_unix_s;
  std::optional<double> disconnected_for_s;
  /// Over the newest steps (at most kRateWindow): steps per second of the steps' own end
  /// times (not their arrival: clients hand them over in batches), and the share of their CPU
  /// step time spent waiting for data (of the steps that measured it). None with fewer than two
  /// steps (or no time between), and a share none where no step of them measured its wait.
  std::optional<double> steps_per_second;
  std::optional<double> data_wait_share;
  // The node's newest sample of the process (node/process_watcher.h); none before one.
  std::optional<double> cpu_seconds;  ///< utime + stime of the process
  std::optional<std::int64_t> pss_bytes, rss_bytes;
  bool pss_is_rss = false;
  std::optional<std::int32_t> workers;
  std::optional<std::int64_t> workers_pss_bytes;
  // What the OOM guard and the adaptive loader did (its `action` rank events): the count per
  // action name (at most kMaxActionNames names; the rest are counted as "other"), and the
  // newest micro-batch size and DataLoader worker count an action set.
  std::map<std::string, std::uint64_t> actions;
  std::optional<std::int64_t> micro_batch_size, loader_workers;
};

/// The host's memory as of the newest process sample; all missing before one.
struct HostMemoryState {
  std::optional<std::int64_t> mem_available_bytes, mem_total_bytes;
  std::optional<std::int64_t> cgroup_limit_bytes, cgroup_usage_bytes;
};

struct TrainingSnapshot {
  std::vector<TrainingRank> ranks;  ///< ordered by rank (unknown first), then pid
  std::uint64_t untracked = 0;      ///< processes ignored because kMaxRanks were connected
  HostMemoryState host;
};

class TrainingState final : public training::StepSink {
 public:
  static constexpr std::size_t kMaxRanks = 1024;
  static constexpr std::chrono::minutes kStaleAfter{5};
  static constexpr std::size_t kRateWindow = 32;
  /// Distinct action names counted per process (a bounded label set); more count as "other".
  static constexpr std::size_t kMaxActionNames = 16;

  /// null `clock` = SteadyClock.
  explicit TrainingState(std::shared_ptr<Clock> clock = nullptr);

  // The agent server's sinks. Never throw.
  void on_step(const training::Step& step) noexcept override;
  void on_rank_event(const training::RankEvent& event) noexcept override;
  void on_process_sample(const training::ProcessSample& sample) noexcept override;

  /// Every tracked process, with `gpu` mapped onto `devices` (training/rank_device.h); removes
  /// those disconnected longer than kStaleAfter.
  TrainingSnapshot snapshot(const std::vector<DeviceStatic>& devices);
  /// Grows with every change (for a renderer's cache).
  std::uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  /// The dashboard's training charts' hour (training_history.h).
  const TrainingHistory& history() const { return history_; }

 private:
  // A step of the rate window, with the process's own end time: clients hand steps over in
  // batches, so arrival times say nothing about the rate.
  struct Arrival {
    double t_end_s;
    double step_s;
    std::optional<double> data_wait_s;
  };
  struct Entry {
    TrainingRank rank;
    std::optional<training::Hello> hello;
    std::optional<MonoClock::time_point> last_step_at;
    std::optional<MonoClock::time_point> disconnected_at;
    std::deque<Arrival> window;
  };
  /// The entry of `pid`, created when there is room; nullptr when not.
  Entry* entry_locked(std::int64_t pid, MonoClock::time_point now);
  void expire_locked(MonoClock::time_point now);

  const std::shared_ptr<Clock> clock_;
  std::atomic<std::uint64_t> generation_{0};
  std::mutex mutex_;                       // guards what follows
  std::map<std::int64_t, Entry> entries_;  // by pid
  std::uint64_t untracked_ = 0;
  HostMemoryState host_;
  TrainingHistory history_;  // its own lock
};

}  // namespace gpumon::exporter
