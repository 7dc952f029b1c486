// SPDX-License-Identifier: MIT
// What the sampler produces, and the interface of everything that consumes it (the live ring
// buffer, the recording, later the exporter and the analyzers). Plain data only.
//
// Thread-safety: the sampler calls a sink from its own thread, one call at a time; a sink that
// is also read from other threads guards its own state. A sink must return quickly (no
// blocking I/O on the sampler thread: queue and write elsewhere) and must never throw.
#pragma once

#include <chrono>
#include <vector>

#include "gpu/gpu_types.h"

namespace gpumon {

using WallClock = std::chrono::system_clock;
using MonoClock = std::chrono::steady_clock;

/// One sampling tick: the GPUs sampled at (about) the same moment. A GPU missing from `gpus`
/// was not due this tick; a lost GPU is present with lost = true.
struct TickSample {
  WallClock::time_point wall_time{};
  MonoClock::time_point mono_time{};
  std::vector<DeviceSample> gpus;
};

/// The compute processes of one GPU at one moment (NVML part plus host details).
struct ProcessSnapshot {
  unsigned gpu = 0;
  WallClock::time_point wall_time{};
  std::vector<GpuProcess> processes;
};

class SampleSink {
 public:
  virtual ~SampleSink() = default;
  virtual void on_tick(const TickSample& tick) = 0;
  virtual void on_event(const GpuEvent& event) = 0;
  virtual void on_processes(const ProcessSnapshot& snapshot) = 0;
};

}  // namespace gpumon
