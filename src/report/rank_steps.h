// SPDX-License-Identifier: MIT
// The training steps of each process (one "rank" per pid and device) on the run's time grid:
// step time, data wait and the allocator's allocated and reserved memory per bucket (a step is
// placed at its end), the recorded GPU its device maps to (training/rank_device.h), and the
// step axis: for each bucket, the step in progress at the bucket's middle.
//
// Thread-safety: pure functions over plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "record/recording_types.h"
#include "report/downsample.h"
#include "training/protocol.h"
#include "training/rank_device.h"

namespace gpumon::report {

struct RankSteps {
  std::int64_t pid = 0;
  std::optional<std::int64_t> rank;
  std::optional<std::string> device;  ///< torch's name ("cuda:1"), as the steps gave it
  training::RankDevice gpu;           ///< the recorded GPU it maps to, or why none
  std::int64_t steps = 0;             ///< step reports with finite times
  std::int64_t first_step = 0, last_step = 0;
  double cpu_step_s = 0;     ///< summed
  training::WaitTally wait;  ///< of the steps that measured it
  BucketSeries step_time_s, data_wait_s_series, allocated_gib, reserved_gib;
  /// The node's samples of the process's PSS with its workers' (GiB); empty before schema 3.
  BucketSeries host_gib;
  /// Per bucket: step number + the share of that step done at the bucket's middle (3.25: a
  /// quarter into step 3); NaN between steps, outside them, or where the count went back
  /// (a restarted counter), so that the axis only ever increases.
  std::vector<double> step_at;
  /// Per bucket, the micro-batch size (the OOM guard's) and the DataLoader worker count (the
  /// adaptive loader's) in force at the bucket's end, from the process's actions (add_actions);
  /// NaN before the first known value; empty when no action of the process set one.
  std::vector<double> micro_batch_size, loader_workers;

  /// "rank 2 (pid 4242, cuda:1)", "pid 99 (cpu)".
  std::string label() const;
};

/// Groups `steps` by process and device, in order of rank (then pid), each mapped to a GPU
/// (training/rank_device.h) as the diagnoses map it. `hellos` are the rank events (only kind
/// "hello" is read: the last of each pid); `processes` are NVML's, for its pid rule.
std::vector<RankSteps> rank_steps(const std::vector<training::Step>& steps,
                                  const std::vector<training::RankEvent>& hellos,
                                  const std::vector<record::RecordedDevice>& devices,
                                  const std::vector<record::RecordedProcess>& processes,
                                  const TimeGrid& grid);

/// What the OOM guard or the adaptive loader did: an `action` rank event, parsed
/// (training::action_of).
struct ActionEvent {
  std::int64_t time_ms = 0;
  std::int64_t pid = 0;
  std::optional<std::int64_t> rank;
  training::Action action;

  /// "oom_split: micro-batch 16", "loader_retuned: 4 workers", for a chart's marker.
  std::string label() const;
};

/// The `action` events of `events` that parse, in time order.
std::vector<ActionEvent> action_events(const std::vector<training::RankEvent>& events);

/// Fills each rank's micro_batch_size and loader_workers step functions from its process's
/// actions: from an action's bucket on, the value it set; before the first, the previous value
/// the first action gave (previous_micro_batch_size, previous_num_workers) from the rank's first
/// step, else nothing.
void add_actions(std::vector<RankSteps>& ranks, const std::vector<ActionEvent>& actions,
                 const TimeGrid& grid);

/// Whose steps give GPU `gpu` its step axis: of the ranks mapped to it, the one with the most
/// steps (`drives` true); else rank 0, else the process with the most steps (`drives` false);
/// nullopt without steps.
struct AxisRank {
  std::size_t index = 0;  ///< into the vector given
  bool drives = false;
};
std::optional<AxisRank> axis_rank(const std::vector<RankSteps>& ranks, std::optional<unsigned> gpu);

}  // namespace gpumon::report
