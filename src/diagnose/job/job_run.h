// SPDX-License-Identifier: MIT
// JobRun: the recordings of one job's nodes (one `gpumon record` or agent per node), joined.
// Each node is diagnosed on its own first, at full detail; then its data moves into one
// `combined` RunData on the reference node's clock, where the job's ranks are compared across
// nodes (job_diagnosis.h):
// - the job: the id every rank's hello carries (job/job_identity.h: Slurm, torchrun's run id,
//   the rendezvous); recordings of different jobs are refused, a node's ranks of another job
//   are left out (a hello that names no job counts as the job's); a rank that restarted keeps
//   its latest process, and two processes of one rank at once are refused;
// - the nodes: named by the host the recording was made on (GPUMON_HOSTNAME overrides it), or
//   by the file where two share a name (with #2, #3 where even those repeat); in the order of
//   their lowest rank; the reference clock is the first node's (rank 0's when it was recorded);
// - the clocks: each node's offset from the reference (clock_offset.h), applied when the steps
//   line up;
// - `combined`: GPU i of node k is GPU k * kNodeGpuStride + i, pid p of node k is k << 32 | p
//   (pids repeat across machines and containers); GPU samples merged into 1 s points, so 16
//   nodes of 8 GPUs for an hour fit in memory; NVML's process lists stay with their node.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "diagnose/diagnosis.h"
#include "diagnose/job/clock_offset.h"
#include "diagnose/run_data.h"
#include "diagnose/thresholds.h"

namespace gpumon::diagnose {

inline constexpr unsigned kNodeGpuStride = 256;

struct NodeRun {
  std::string name;    ///< the host (or file) name
  std::string source;  ///< the recording's path
  /// Its own data until join_nodes() moves the samples, steps and events into the job's
  /// `combined` (ranks, NVML's process lists, meta and span stay, on the node's own clock, as
  /// its diagnosis is).
  RunData run;
  Diagnosis diagnosis;              ///< its own, on its own data at full detail
  ClockOffset clock;                ///< its clock against the reference node's
  std::vector<std::int64_t> ranks;  ///< the job's ranks it ran, in order
};

struct JobRun {
  std::string job_id;  ///< empty when no rank named its job
  std::vector<NodeRun> nodes;
  std::size_t reference = 0;               ///< the node whose clock the others are set to
  std::optional<std::int64_t> world_size;  ///< as the ranks said
  RunData combined;                        ///< every node, on the reference clock
  std::vector<NotJudged> not_judged;       ///< what the join could not do, and why
};

/// A node from its recording's data: diagnosed, then its GPU samples merged into 1 s points.
NodeRun make_node(RunData run, std::string source, const Thresholds& t = {});

/// Joins nodes of one job (the rules above); an error names the recordings that do not belong
/// together.
std::variant<JobRun, std::string> join_nodes(std::vector<NodeRun> nodes, const Thresholds& t = {});

/// The node and NVML index of a GPU of `combined`.
struct NodeGpu {
  std::size_t node = 0;
  unsigned gpu = 0;
};
inline NodeGpu node_gpu(unsigned combined_gpu) {
  return {combined_gpu / kNodeGpuStride, combined_gpu % kNodeGpuStride};
}
inline std::size_t node_of_pid(std::int64_t combined_pid) {
  return static_cast<std::size_t>(combined_pid >> 32);
}

/// Sorted ranks as "0-7" or "0,2,5-6"; "none" for none.
std::string rank_ranges(const std::vector<std::int64_t>& ranks);

}  // namespace gpumon::diagnose
