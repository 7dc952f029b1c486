// SPDX-License-Identifier: MIT
// GpuReader: the thread that makes one GPU's NVML calls. Each tick the sampler hands every idle
// reader the tasks due for its GPU, waits for them until the tick's deadline, and publishes; a
// reader still inside a call then makes only its own GPU stale, never the others late.
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

/// One task a reader ran.
struct TaskRun {
  std::size_t task = 0;  ///< task number
  bool ok = true;        ///< false when it threw
  bool lost = false;     ///< the sample was marked lost after it ran
  double cost_us = 0;    ///< clock time around the call
};

struct ReaderResult {
  GpuTickOutput out;
  std::vector<TaskRun> runs;
  double thread_cpu_s = 0;  ///< the reader thread's CPU time when the job ended
};

/// What a reader is inside now.
struct ReaderBusy {
  std::size_t task = 0;
  MonoClock::time_point since{};  ///< when that task's call started (or the job was handed)
  const char* call = nullptr;     ///< the backend function it is inside, when the backend notes it
};

class GpuReader {
 public:
  GpuReader(unsigned gpu, std::shared_ptr<GpuBackend> backend,
            std::shared_ptr<const TaskFunctions> tasks, std::shared_ptr<Clock> clock);
  ~GpuReader();  ///< finish() with no wait
  GpuReader(const GpuReader&) = delete;
  GpuReader& operator=(const GpuReader&) = delete;

  /// Hands over `tasks` (task numbers in order; after the first, none runs once the sample is
  /// marked lost); `latch` is counted down when they are done. Only when idle().
  void submit(std::vector<std::size_t> tasks, std::shared_ptr<TickLatch> latch,
              MonoClock::time_point now);
  /// No job in progress (a finished one may wait in take()).
  bool idle() const;
  /// The job in progress, if any: the task it is inside and since when.
  std::optional<ReaderBusy> busy() const;
  /// Makes the job in progress count down `latch` instead of its own; false when idle.
  bool rebind(const std::shared_ptr<TickLatch>& latch);
  /// The finished job's result, once.
  std::optional<ReaderResult> take();
  /// Ends the thread: joins it when idle or when its job ends by `deadline` (steady clock),
  /// else leaves it inside its call (detached) to end on its own when the call returns.
  void finish(std::chrono::steady_clock::time_point deadline);

 private:
  struct State;
  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace gpumon::detail
