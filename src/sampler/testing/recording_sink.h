// SPDX-License-Identifier: MIT
// RecordingSink: a SampleSink that keeps what it is given, optionally throwing from on_tick.
// Test-only; header-only. Thread-safety: a mutex guards the record (the sampler thread
// writes, the test reads).
#pragma once

#include <mutex>
#include <stdexcept>
#include <vector>

#include "sampler/sample_sink.h"

namespace gpumon::testing {

class RecordingSink final : public SampleSink {
 public:
  explicit RecordingSink(bool throw_on_tick = false) : throw_on_tick_(throw_on_tick) {}

  void on_tick(const TickSample& tick) override {
    {
      std::lock_guard lock(mutex_);
      ticks_.push_back(tick);
    }
    if (throw_on_tick_) throw std::runtime_error("sink fails");
  }
  void on_event(const GpuEvent& event) override {
    std::lock_guard lock(mutex_);
    events_.push_back(event);
  }
  void on_processes(const ProcessSnapshot& snapshot) override {
    std::lock_guard lock(mutex_);
    processes_.push_back(snapshot);
  }

  std::vector<TickSample> ticks() const {
    std::lock_guard lock(mutex_);
    return ticks_;
  }
  std::vector<GpuEvent> events() const {
    std::lock_guard lock(mutex_);
    return events_;
  }
  std::vector<ProcessSnapshot> processes() const {
    std::lock_guard lock(mutex_);
    return processes_;
  }

 private:
  bool throw_on_tick_;
  mutable std::mutex mutex_;
  std::vector<TickSample> ticks_;
  std::vector<GpuEvent> events_;
  std::vector<ProcessSnapshot> processes_;
};

}  // namespace gpumon::testing
