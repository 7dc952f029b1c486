// SPDX-License-Identifier: MIT
// A sampler task: one kind of read made for every GPU when due (what to read, how often, what
// it is expected to cost). The sampler's own tasks (metrics, energy, static details,
// processes) are built by make_builtin_tasks(); later readers (GPM, the driver's sample
// buffers, process utilization) are more Tasks given to Sampler::add_task().
//
// Thread-safety: a task's function runs on one of the sampler's reader threads, with the
// backend: one call at a time for a GPU, but a reader left inside a hung call on one GPU runs
// beside the reader of the others, so a task must not touch other GPUs' state.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpu/gpu_backend.h"
#include "sampler/sampler_config.h"

namespace gpumon {

/// What the tasks produced for one GPU in one tick.
struct GpuTickOutput {
  DeviceSample sample;  ///< filled by the metrics task (always first); others add fields
  std::optional<Reading<std::vector<GpuProcess>>> processes;  ///< set when the list was read
};

struct Task {
  std::string name;
  /// How often it runs: 0 = every tick. Never faster than the interval; the sampler may
  /// stretch it further (SamplerConfig::slow_task_cpu_share).
  std::chrono::milliseconds period{0};
  bool once = false;  ///< run once per GPU (the first tick that GPU answers), then never
  /// Cost of one call for one GPU, from DESIGN.md, until the sampler has measured it.
  std::chrono::microseconds estimated_cost{0};
  /// Reads GPU `gpu` into `out`. Not called for a GPU the metrics task found lost this tick.
  /// May throw: the sampler catches and counts it.
  std::function<void(GpuBackend& backend, unsigned gpu, GpuTickOutput& out)> run;
  /// Spread the GPUs over the period (GPU g due g/n of the way through it) instead of reading
  /// them all in one tick: for slow reads, so no single tick overruns the interval.
  bool spread = false;
  /// Also read every GPU in the first tick (whatever `spread` says) and once more in a final
  /// tick when the sampler stops: for a counter (energy), whose readings can only measure the
  /// stretch between two of them, so that they span the whole run.
  bool edges = false;
};

/// The tasks `config` asks for, metrics first: "metrics" (config.metrics, every tick),
/// "energy" (config.energy_period, read at the run's edges too), "static_details" (once),
/// "processes" (config.process_period).
std::vector<Task> make_builtin_tasks(const SamplerConfig& config);

}  // namespace gpumon
