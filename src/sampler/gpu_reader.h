// SPDX-License-Identifier: MIT
// GpuReader: a thread that makes NVML calls for the sampler. Each tick the sampler hands one
// reader every GPU's due tasks and waits for it until the tick's deadline. A reader that is
// still inside a call then stays with that GPU, cancelled: it drops the GPUs it has not begun
// and ends its job when the call returns; the next tick goes to another reader (the sampler
// keeps a pool). So a hung call makes its GPU stale without holding the others, and a tick
// costs one hand-over, not one per GPU.
//
// Ownership: the reader's thread shares ownership of the backend, the task functions, the clock
// and the reader's state, so a thread left inside a hung call (finish() detaches it) touches
// nothing freed when the call returns, and NVML is neither shut down nor unloaded under it.
// Thread-safety: the public members are for the sampler thread; TickLatch::count_down is
// called by readers, interrupt() by any thread.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "sampler/clock.h"
#include "sampler/sampler_task.h"

namespace gpumon::detail {

/// The task functions, indexed by task number (the sampler's order).
using TaskFunctions = std::vector<std::function<void(GpuBackend&, unsigned, GpuTickOutput&)>>;

/// Counts a tick's jobs down; done() is requested when the last one finishes (or on interrupt).
class TickLatch {
 public:
  explicit TickLatch(std::size_t jobs);
  void count_down();
  /// Wakes the waiter before the jobs are done (the sampler is stopping).
  void interrupt() { done_.request(); }
  StopSignal& done() { return done_; }

 private:
  std::mutex mutex_;
  std::size_t left_;
  StopSignal done_;
};

/// One GPU's share of a job: its due tasks, in order (after the first, none runs once the
/// sample is marked lost).
struct GpuJob {
  unsigned gpu = 0;
  std::vector<std::size_t> tasks;
};

/// One task a reader ran.
struct TaskRun {
  std::size_t task = 0;  ///< task number
  bool ok = true;        ///< false when it threw
  bool lost = false;     ///< the sample was marked lost after it ran
  double cost_us = 0;    ///< clock time around the call
};

/// What a reader read for one GPU.
struct GpuResult {
  unsigned gpu = 0;
  GpuTickOutput out;
  std::vector<TaskRun> runs;
};

/// What a reader is inside now.
struct ReaderBusy {
  unsigned gpu = 0;
  std::size_t task = 0;
  MonoClock::time_point since{};  ///< when that task's call started (or the job was handed)
  const char* call = nullptr;     ///< the backend function it is inside, when the backend notes it
};

class GpuReader {
 public:
  GpuReader(std::shared_ptr<GpuBackend> backend, std::shared_ptr<const TaskFunctions> tasks,
            std::shared_ptr<Clock> clock);
  ~GpuReader();  ///< finish() with no wait
  GpuReader(const GpuReader&) = delete;
  GpuReader& operator=(const GpuReader&) = delete;

  /// Hands over `jobs`, read in order; `latch` is counted down when they are done. Only when
  /// idle().
  void submit(std::vector<GpuJob> jobs, std::shared_ptr<TickLatch> latch,
              MonoClock::time_point now);
  /// No job in progress (finished GPUs may wait in take()).
  bool idle() const;
  /// The job in progress, if any: the GPU and task it is inside and since when.
  std::optional<ReaderBusy> busy() const;
  /// Makes the job in progress count down `latch` instead of its own; false when idle.
  bool rebind(const std::shared_ptr<TickLatch>& latch);
  /// The GPUs finished since the previous take(), in order.
  std::vector<GpuResult> take();
  /// Ends the job in progress once the call it is inside returns: nothing more is read.
  void cancel();
  /// The thread's CPU time (CLOCK_THREAD_CPUTIME_ID) when its newest job ended.
  double thread_cpu_s() const;
  /// Ends the thread: joins it when idle or when its job ends by `deadline` (steady clock),
  /// else leaves it inside its call (detached) to end on its own when the call returns.
  void finish(std::chrono::steady_clock::time_point deadline);

 private:
  struct State;
  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace gpumon::detail
