// SPDX-License-Identifier: MIT
// RecordingWriter: a SampleSink that records ticks, events and process lists into a recording
// file (docs/recording.md), and a StepSink that records the training steps beside them. The
// sampler and the agent threads only copy into bounded queues; a writer thread commits one
// SQLite transaction per flush interval, so a kill -9 loses at most the last interval, and
// checkpoints the WAL into the main file every few seconds.
//
// The GPU side (ticks, events, process lists) and the training side have queues of their own,
// so a flood of steps never costs a GPU tick. On the training side each process may queue at
// most its share (step_shares.h): a process flooding steps loses only its own, and the
// recording says so in a `steps_lost` rank event naming it. Anything else refused (a full
// queue) is dropped and counted.
//
// When a write fails (disk full, I/O error) the recording stops: what was committed stays
// readable, status() says why ("disk full: recording stopped at ..."), later items are dropped
// and counted. The producer is never blocked on I/O and nothing throws out of the sink.
//
// Thread-safety: every on_* call, status() and close() are safe from any thread (the queue is
// guarded by a mutex).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "record/recording_types.h"
#include "sampler/sample_sink.h"

namespace gpumon::record {

namespace detail {
class RecordingBatcher;
class StepShares;
}  // namespace detail

struct RecordingOptions {
  std::string path;
  bool overwrite = false;  ///< replace an existing file (else creating fails)
  /// Commits keep to this schedule, so a kill -9 loses at most one interval and a commit.
  std::chrono::milliseconds flush_interval{500};
  /// The main file is brought up to date from the WAL this often (RecordingStore::checkpoint()).
  std::chrono::milliseconds checkpoint_interval{5000};
  std::size_t queue_capacity = 4096;  ///< ticks + events + process lists waiting to be written
  /// Training steps waiting to be written: 4 s of 8 ranks x 1000 steps/s, ~10 MB at most.
  std::size_t step_queue_capacity = 32768;
  std::size_t chunk_max_ticks = 600;        ///< a GPU's chunk closes after this many ticks...
  std::chrono::seconds chunk_max_span{60};  ///< ...or this much wall time
};

struct RecordingStatus {
  std::uint64_t ticks_written = 0;  ///< committed to the file
  std::uint64_t steps_written = 0;  ///< training steps committed (training::Step)
  std::uint64_t dropped = 0;        ///< items not recorded: queue full, or after a stop
  bool stopped = false;             ///< a write failed; nothing more is recorded
  std::string error;                ///< why it stopped: "disk full: recording stopped at ..."
};

class RecordingWriter final : public SampleSink, public training::StepSink {
 public:
  /// Creates the file and starts the writer thread; nullptr and `error` set when the file
  /// cannot be created (exists, no permission, not a directory).
  static std::unique_ptr<RecordingWriter> create(const RecordingOptions& options,
                                                 const RunInfo& run,
                                                 const std::vector<DeviceStatic>& devices,
                                                 std::string& error);
  ~RecordingWriter() override;
  RecordingWriter(const RecordingWriter&) = delete;
  RecordingWriter& operator=(const RecordingWriter&) = delete;

  void on_tick(const TickSample& tick) override;
  void on_event(const GpuEvent& event) override;
  void on_processes(const ProcessSnapshot& snapshot) override;

  /// A training step or rank event from the agent (docs/python.md): queued like a tick, from
  /// any thread (the agent's socket thread calls these while the sampler calls on_tick).
  void on_step(const training::Step& step) override;
  void on_rank_event(const training::RankEvent& event) override;
  /// A process's CPU and memory sample (node/process_watcher.h), once a second per process.
  void on_process_sample(const training::ProcessSample& sample) override;

  /// Metadata written with the end time when the recording closes (how the recorded command
  /// ended: docs/recording.md "meta"); a key set twice keeps the last value.
  void set_end_meta(std::string key, std::string value);
  /// Writes what is queued and the end time, then closes the file. Idempotent; blocks for the
  /// last write (call it from the thread that ends the run, not from the sampler).
  void close();
  RecordingStatus status() const;

 private:
  using GpuItem = std::variant<TickSample, GpuEvent, ProcessSnapshot>;
  /// What one commit writes.
  struct Batch {
    std::deque<GpuItem> gpu;
    std::vector<training::Step> steps;
    std::vector<training::RankEvent> rank_events;
    std::vector<training::ProcessSample> process_samples;
    bool empty() const {
      return gpu.empty() && steps.empty() && rank_events.empty() && process_samples.empty();
    }
    std::size_t size() const {
      return gpu.size() + steps.size() + rank_events.size() + process_samples.size();
    }
  };

  RecordingWriter(const RecordingOptions& options,
                  std::unique_ptr<detail::RecordingBatcher> batcher);
  /// Calls `push` under the queue's lock unless the recording stopped or is closing, or `full`
  /// says the queue has no room; counts the item as dropped otherwise. Never throws.
  template <typename Full, typename Push>
  void enqueue(Full&& full, Push&& push) noexcept;
  void run();
  /// Writes one batch (the last when `closing`); the error that stops the recording, or empty.
  std::string write_batch(
      Batch& batch, bool closing,
      const std::vector<std::pair<std::string, std::string>>& end_meta) noexcept;

  RecordingOptions options_;
  std::unique_ptr<detail::RecordingBatcher> batcher_;  // owned by the writer thread once it runs
  mutable std::mutex mu_;
  std::condition_variable wake_;
  Batch queue_;
  std::unique_ptr<detail::StepShares> shares_;  // which steps queue_ takes
  bool closing_ = false;
  std::atomic<bool> stopped_{false};
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::uint64_t> ticks_written_{0};
  std::atomic<std::uint64_t> steps_written_{0};
  std::string error_;                                          // guarded by mu_
  std::vector<std::pair<std::string, std::string>> end_meta_;  // guarded by mu_
  std::thread thread_;
};

/// Hostname, driver version and simulated scenario from the backend's system facts.
RunInfo make_run_info(const SystemInfo& system, std::string gpumon_version, std::string command);

}  // namespace gpumon::record
