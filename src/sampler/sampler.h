// SPDX-License-Identifier: MIT
// Sampler: the scheduler of the GPU reads and the only publisher. Its thread wakes on a
// drift-free schedule (tick k at t0 + k * interval), hands the tasks due for every GPU to a
// reader thread (gpu_reader.h), waits for it until the tick's deadline (a tenth of an interval
// before the next tick, at least SamplerConfig::min_reader_wait), and publishes each TickSample to
// history() and to the registered sinks, GpuEvents (lost / recovered) to events() and the sinks,
// and ProcessSnapshots to the sinks. A reader still inside a call at the deadline stays with that
// GPU, which is published stale (DeviceSample::stale, every reading Missing::kStale) and gets no
// new work until the call returns; the next tick goes to another reader, so the other GPUs keep
// their schedule. See docs/sampler.md for the schedule and the reasons behind each rate.
//
// Thread-safety: configure (add_sink, add_task) before start(); after that every public
// member is safe from any thread. Nothing throws out of the sampler's threads: task, sink and
// backend exceptions are caught and counted in stats().
#pragma once

#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "host/process_inspector.h"
#include "sampler/clock.h"
#include "sampler/gpu_reader.h"
#include "sampler/ring_buffer.h"
#include "sampler/sample_sink.h"
#include "sampler/sampler_config.h"
#include "sampler/sampler_task.h"

namespace gpumon {

class Sampler {
 public:
  /// Shares the backend (not null) with its reader threads, which keep it alive while one is
  /// inside a call that outlasted stop(). `clock` defaults to SteadyClock. Throws
  /// std::invalid_argument for a config out of range (see validate()).
  explicit Sampler(std::shared_ptr<GpuBackend> backend, SamplerConfig config = {},
                   std::shared_ptr<Clock> clock = nullptr);
  ~Sampler();  ///< stops
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  /// Before start() only (throws std::logic_error after). Sinks are called on the sampler
  /// thread, in the order added.
  void add_sink(std::shared_ptr<SampleSink> sink);
  /// An extra task (GPM, sample buffers...), run after the built-in ones. Before start() only.
  void add_task(Task task);

  /// Starts the thread (and the backend's event stream when config().events); the first tick
  /// is at once. Throws std::logic_error if called twice or after stop() (a sampler runs once).
  void start();
  /// Wakes the thread, drops the tick in progress, runs a final tick (the metrics and the tasks
  /// read at the run's edges, Task::edges, for every GPU whose reader is free) and joins. Waits
  /// for calls in progress at most config().stop_timeout in all; a reader still inside a hung
  /// call is then detached, owning the backend until the call returns. Idempotent.
  void stop();
  bool running() const;

  const SamplerConfig& config() const { return config_; }
  /// Driver-wide facts, copied at construction.
  const SystemInfo& system() const { return system_; }
  unsigned device_count() const { return device_count_; }
  /// Static facts of every GPU, refreshed after the static-details task ran.
  std::vector<DeviceStatic> devices() const;
  SamplerStats stats() const;
  /// The newest process snapshot of every GPU (empty until the first process read).
  std::vector<ProcessSnapshot> latest_processes() const;

  const RingBuffer<TickSample>& history() const { return history_; }
  const RingBuffer<GpuEvent>& events() const { return events_; }

 private:
  struct TaskState;
  class HostDetails;

  enum class TickKind { kScheduled, kFinal };

  void run() noexcept;
  /// One tick, waiting for the readers until `deadline`; false when stop() interrupted it before
  /// it was published (never a final one).
  bool tick(MonoClock::time_point now, MonoClock::time_point deadline, SamplerStats& stats,
            TickKind kind);
  struct Reader {
    std::unique_ptr<detail::GpuReader> reader;
    int hung_gpu = -1;  // the GPU whose call it is inside past a deadline (cancelled), or -1
  };
  /// A reader that is free, made when there is none.
  std::size_t idle_reader();
  /// Takes what `r` read and books it; a reader still inside a call is cancelled and left with
  /// that GPU (hung_on_). Returns the GPUs read, in order.
  std::vector<detail::GpuResult> collect(Reader& r, MonoClock::time_point now, TickKind kind,
                                         SamplerStats& stats, bool& details_read);
  /// Adds one GPU's reading to `tick` (processes, errors, lost/recovered events).
  void publish_gpu(detail::GpuResult& result, TickSample& tick,
                   std::vector<ProcessSnapshot>& snapshots, SamplerStats& stats);
  /// Waits for `latch` until `deadline`, woken early by stop() unless this is the final tick.
  void wait_for(const std::shared_ptr<detail::TickLatch>& latch, MonoClock::time_point deadline,
                TickKind kind);
  /// Books a reader's finished job: task statistics and schedule. True when a once task ran.
  /// `late`: the job finished after its tick was published (its GPU was stale).
  bool account(const detail::GpuResult& result, MonoClock::time_point now, TickKind kind,
               SamplerStats& stats, bool late);
  /// Whether task number `index` reads `gpu` in this tick.
  bool is_due(const TaskState& task, std::size_t index, unsigned gpu, MonoClock::time_point now,
              TickKind kind) const;
  void update_period(TaskState& task);
  /// Copies the thread's statistics (and each task's) to stats_.
  void publish_stats(SamplerStats& stats);
  void publish_processes(std::vector<ProcessSnapshot>& snapshots, SamplerStats& stats);
  void emit(const GpuEvent& event, SamplerStats& stats);
  /// Called on the event stream's thread: queues the event for the next tick.
  void queue_event(const GpuEvent& event);
  /// Passes the queued XID/ECC events on; lost/recovered come from the ticks themselves.
  void deliver_queued_events(SamplerStats& stats);
  template <typename Fn>
  void for_each_sink(SamplerStats& stats, Fn&& fn);

  std::shared_ptr<GpuBackend> backend_;
  SamplerConfig config_;
  std::shared_ptr<Clock> clock_;
  SystemInfo system_;
  unsigned device_count_ = 0;
  std::vector<std::shared_ptr<SampleSink>> sinks_;
  std::vector<TaskState> tasks_;
  std::unique_ptr<HostDetails> host_;
  RingBuffer<TickSample> history_;
  RingBuffer<GpuEvent> events_;

  // Sampler thread only (the readers are created by start() and finished by stop()).
  std::shared_ptr<const detail::TaskFunctions> functions_;  // the tasks' run, for the readers
  std::vector<Reader> readers_;  // one reads each tick; the others are inside hung calls
  std::vector<int> hung_on_;     // per GPU: the reader inside its call past a deadline, or -1
  int unpublished_ = -1;         // the reader of a tick that stop() dropped
  MonoClock::time_point unpublished_deadline_{};  // and that tick's deadline
  std::vector<char> lost_;
  TickSample spare_;  // the tick evicted from history_, reused for its allocations
  TaskStats host_stats_;
  double host_total_us_ = 0;

  mutable std::mutex mutex_;  // guards what follows
  SamplerStats stats_;
  std::vector<DeviceStatic> devices_;
  std::vector<ProcessSnapshot> processes_;
  bool started_ = false;

  std::mutex queue_mutex_;  // guards what follows (event stream thread -> sampler thread)
  std::vector<GpuEvent> queued_events_;
  std::uint64_t queue_dropped_ = 0;

  std::mutex wake_mutex_;                       // guards waiting_ (stop() wakes the tick's wait)
  std::shared_ptr<detail::TickLatch> waiting_;  // the latch the sampler thread waits on

  StopSignal stop_;
  std::thread thread_;
  std::mutex join_mutex_;  // guards thread_ and events_stream_; serialises start() and stop()
  std::unique_ptr<EventStream> event_stream_;  // declared after backend_: destroyed before it
};

}  // namespace gpumon
