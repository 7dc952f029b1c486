// SPDX-License-Identifier: MIT
#include "sampler/gpu_reader.h"

#include <time.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

namespace gpumon::detail {

TickLatch::TickLatch(std::size_t jobs) : left_(jobs) {
  if (jobs == 0) done_.request();
}

void TickLatch::count_down() {
  bool last = false;
  {
    std::lock_guard lock(mutex_);
    last = left_ > 0 && --left_ == 0;
  }
  if (last) done_.request();
}

struct GpuReader::State {
  std::mutex mutex;  // guards what follows
  std::condition_variable cv;
  bool quit = false;
  bool in_progress = false;  // handed over and not yet finished
  bool queued = false;       // handed over, not yet picked up by the thread
  bool cancelled = false;    // the job in progress reads nothing more
  std::vector<GpuJob> jobs;
  std::shared_ptr<TickLatch> latch;
  ReaderBusy busy;
  std::vector<GpuResult> results;
  double thread_cpu_s = 0;
  std::atomic<const char*> call{nullptr};  // written by the backend on the reader thread
};

namespace {

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

GpuReader::GpuReader(std::shared_ptr<GpuBackend> backend,
                     std::shared_ptr<const TaskFunctions> tasks, std::shared_ptr<Clock> clock)
    : state_(std::make_shared<State>()) {
  // Everything the thread touches is owned by the lambda: see the header.
  thread_ = std::thread([state = state_, backend = std::move(backend), tasks = std::move(tasks),
                         clock = std::move(clock)] {
    backend->note_calls_in(&state->call);
    while (true) {
      std::vector<GpuJob> jobs;
      {
        std::unique_lock lock(state->mutex);
        state->cv.wait(lock, [&] { return state->quit || state->queued; });
        if (!state->queued) return;  // quit with nothing handed over
        state->queued = false;
        jobs.swap(state->jobs);
      }
      for (GpuJob& job : jobs) {
        GpuResult r;
        r.gpu = job.gpu;
        r.out.sample.index = job.gpu;
        bool cancelled = false;
        for (const std::size_t t : job.tasks) {
          if (!r.runs.empty() && r.out.sample.lost) break;  // found lost: nothing more to ask
          const MonoClock::time_point before = clock->now();
          {
            std::lock_guard lock(state->mutex);
            cancelled = state->cancelled;
            if (cancelled) break;
            state->busy = {job.gpu, t, before};
          }
          TaskRun run{t};
          try {
            (*tasks)[t](*backend, job.gpu, r.out);
          } catch (...) {
            run.ok = false;
          }
          run.lost = r.out.sample.lost;
          run.cost_us = std::chrono::duration<double, std::micro>(clock->now() - before).count();
          r.runs.push_back(run);
        }
        std::lock_guard lock(state->mutex);
        if (!r.runs.empty()) state->results.push_back(std::move(r));
        if (cancelled || state->cancelled) break;
      }
      const double cpu = thread_cpu_seconds();
      std::shared_ptr<TickLatch> latch;
      {
        std::lock_guard lock(state->mutex);
        state->thread_cpu_s = cpu;
        state->in_progress = false;
        state->cancelled = false;
        latch.swap(state->latch);
      }
      state->cv.notify_all();
      if (latch) latch->count_down();
    }
  });
}

GpuReader::~GpuReader() {
  finish(std::chrono::steady_clock::time_point::min());
}

void GpuReader::submit(std::vector<GpuJob> jobs, std::shared_ptr<TickLatch> latch,
                       MonoClock::time_point now) {
  {
    std::lock_guard lock(state_->mutex);
    state_->busy = {jobs.empty() ? 0 : jobs.front().gpu, 0, now};
    state_->jobs = std::move(jobs);
    state_->latch = std::move(latch);
    state_->queued = true;
    state_->in_progress = true;
    state_->cancelled = false;
  }
  state_->cv.notify_one();
}

bool GpuReader::idle() const {
  std::lock_guard lock(state_->mutex);
  return !state_->in_progress;
}

std::optional<ReaderBusy> GpuReader::busy() const {
  std::lock_guard lock(state_->mutex);
  if (!state_->in_progress) return std::nullopt;
  ReaderBusy b = state_->busy;
  b.call = state_->call.load(std::memory_order_relaxed);
  return b;
}

bool GpuReader::rebind(const std::shared_ptr<TickLatch>& latch) {
  std::lock_guard lock(state_->mutex);
  if (!state_->in_progress) return false;
  state_->latch = latch;
  return true;
}

std::vector<GpuResult> GpuReader::take() {
  std::lock_guard lock(state_->mutex);
  std::vector<GpuResult> r;
  r.swap(state_->results);
  return r;
}

void GpuReader::cancel() {
  std::lock_guard lock(state_->mutex);
  if (state_->in_progress) state_->cancelled = true;
}

double GpuReader::thread_cpu_s() const {
  std::lock_guard lock(state_->mutex);
  return state_->thread_cpu_s;
}

void GpuReader::finish(std::chrono::steady_clock::time_point deadline) {
  if (!thread_.joinable()) return;
  bool idle = false;
  {
    std::unique_lock lock(state_->mutex);
    const bool picked_up = state_->in_progress && !state_->queued;
    state_->quit = true;
    state_->cancelled = true;
    if (picked_up) {
      // It is inside a call: wait for it, but only until the deadline.
      state_->cv.wait_until(lock, deadline, [&] { return !state_->in_progress; });
    } else {
      state_->queued = false;  // a job not yet picked up is dropped
      state_->in_progress = false;
    }
    idle = !state_->in_progress;
  }
  state_->cv.notify_all();
  if (idle) {
    thread_.join();
  } else {
    thread_.detach();  // still inside NVML: it ends when the call returns (see the header)
  }
}

}  // namespace gpumon::detail
