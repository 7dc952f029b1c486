// SPDX-License-Identifier: MIT
// StepClock: a training loop's step boundaries turned into step messages (messages.h): step and
// data-wait times, allocator stats at a bounded rate, and the GPU time of a step at a bounded
// rate, read a step later from a GpuTimer without waiting for the GPU. The C++ client
// (gpumon::Monitor) and the Python package (_gpumon.StepClock, python/gpumon/_monitor.py) both
// run it, so a step costs the same small, allocation-free work in both (docs/python.md "Cost").
//
// A step costs three reads of steady_clock and a copy of its fields; the wall clock is read
// about once a second (resync), and a step's wall time is its steady time plus that offset.
// (Reading the CPU's TSC instead saved 0.4-0.9 µs a step on the H200, under 0.1 % of a 2 ms
// step: not worth its calibration code; docs/PERFORMANCE.md "The step clock's cost".) The fields
// wait in an outbox until the owner drains it (drain(), which writes the messages then) and hands
// them to the agent client; the last `keep_recent` sent steps stay readable for an OOM report
// (recent()).
//
// Exceptions: the callbacks' (allocator_source, GpuTimer) pass through; the clock stays usable.
// Thread-safety: one thread at a time (the training loop's).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/messages.h"
#include "gpumon/monitor.h"
#include "util/hot.h"

namespace gpumon::client {

/// The GPU timer of the public header (gpumon/monitor.h): the Python module implements it
/// with torch.cuda.Event, a C++ caller with its own events.
using GpuTimer = gpumon::GpuTimer;

struct StepClockOptions {
  /// allocator_source runs at a step's end at most once per this interval (seconds).
  double allocator_interval_s = 1.0;
  std::function<AllocatorStats()> allocator_source;  ///< empty: "mem":null unless set_next_...
  /// The GPU time of at most one step per gpu_interval_s; none: gpu_step_s is what
  /// set_next_gpu_seconds() gave, else null.
  std::shared_ptr<GpuTimer> gpu_timer;
  double gpu_interval_s = 0.1;
  std::size_t keep_recent = 0;  ///< sent lines kept for recent()
};

class StepClock {
 public:
  using Clock = std::chrono::steady_clock;

  /// The first step starts now.
  explicit StepClock(StepClockOptions options = {});
  /// How often the wall clock is read to place steady_clock's times on it.
  static constexpr std::chrono::seconds kResyncInterval{1};

  void set_allocator_source(std::function<AllocatorStats()> source, double interval_s);
  void set_gpu_timer(std::shared_ptr<GpuTimer> timer, double interval_s);

  /// A step boundary now: the step since the last boundary ends and is emitted.
  GPUMON_HOT void step();
  /// A step boundary now, emitted at the next call (Python's plain mon.step()), unless a scoped
  /// step begins first: then this was the scoped step's start, not a boundary.
  GPUMON_HOT void step_deferred();
  /// A step timed from now to end_scoped() (what ran before it is not counted).
  GPUMON_HOT void begin_scoped();
  /// Ends the scoped step now; false when none had begun.
  GPUMON_HOT bool end_scoped();
  /// A new epoch: when nothing was fetched since the last boundary, the next step starts now.
  void begin_epoch();
  /// Around fetching a batch: the time between counts as the step's data wait.
  GPUMON_HOT void fetch_begin();
  GPUMON_HOT void fetch_end();
  /// Data wait measured by the caller (a trainer's callbacks); marks the step as fetched.
  void add_data_wait(double seconds);

  /// Sent with the next step, instead of allocator_source's and the timer's values.
  void set_next_allocator_stats(const AllocatorStats& stats);
  void set_next_gpu_seconds(double seconds);
  bool allocator_stats_due() const;

  /// Emits the deferred boundary and the step waiting for its GPU time (null if not done).
  void finish();

  /// Steps emitted so far, counting a deferred boundary.
  std::int64_t steps() const { return step_ + (pending_ ? 1 : 0); }
  /// Calls sink(line) with the message of each step emitted since the last drain, oldest first.
  template <typename Sink>
  std::size_t drain(Sink&& sink) {
    const std::size_t n = out_.size();
    for (const StepFields& f : out_) {
      step_message(f, line_);
      sink(static_cast<const std::string&>(line_));
      remember(f);  // here, in one warm pass, rather than a second copy in every step
    }
    out_.clear();  // keeps its capacity: a warm step allocates nothing
    return n;
  }
  bool has_out() const { return !out_.empty(); }
  /// Steps emitted and not yet drained.
  std::size_t queued() const { return out_.size(); }
  /// The time the last call that read the clock read (the constructor's at first): the Python
  /// calls' hand-over check uses it instead of a read of its own.
  Clock::time_point last_now() const { return last_now_; }
  /// The messages of the last keep_recent sent steps and, last, of the step still waiting for
  /// its GPU time (null there).
  GPUMON_COLD std::vector<std::string> recent() const;

 private:
  struct Boundary {
    Clock::time_point at;
    double wall;
  };
  struct Waiting {  // a timed step, sent at the next step with its GPU time when known
    StepFields fields;
    int from = 0;
    int to = 0;
  };

  GPUMON_HOT Boundary now();
  GPUMON_HOT Clock::time_point now_at();  // the time only
  GPUMON_COLD void resync(Clock::time_point at);
  GPUMON_HOT void apply_pending();
  GPUMON_HOT void emit(const Boundary& start, const Boundary& end);
  GPUMON_HOT std::optional<AllocatorStats> read_mem(Clock::time_point now);
  GPUMON_HOT void send(const StepFields& fields);
  GPUMON_COLD void remember(const StepFields& fields);
  void send_waiting();
  void maybe_begin_gpu(Clock::time_point now);
  void restart_gpu(Clock::time_point now);

  // What a step reads and writes, together at the start: after a training step's work every
  // cache line here is a miss, so the fewer the better. The rest after.
  Clock::time_point last_now_;
  Clock::time_point resync_next_{};
  std::int64_t step_ = 0;
  Boundary t0_;
  double data_wait_s_ = 0;
  std::optional<Clock::time_point> wait_start_;
  std::optional<Boundary> pending_;
  std::optional<Boundary> scoped_start_;
  Clock::time_point mem_next_{};
  Clock::time_point gpu_next_{};
  std::optional<double> next_gpu_s_;
  std::optional<int> gpu_begun_;
  bool fetched_ = false;
  bool wait_measured_ = false;  // a fetch was ever timed: data waits are known from then on
  bool timed_ = false;          // options_.gpu_timer is set
  bool mem_given_ = false;      // next_mem_ is set
  double wall_offset_s_ = 0;    // the wall clock minus steady_clock, at the last resync
  std::vector<StepFields> out_;

  StepClockOptions options_;
  std::optional<AllocatorStats> next_mem_;
  std::optional<Waiting> waiting_;
  std::string line_;                // the message being written, reused
  std::vector<StepFields> recent_;  // a ring of the last keep_recent drained steps
  std::size_t recent_next_ = 0;
};

}  // namespace gpumon::client
