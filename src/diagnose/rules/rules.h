// SPDX-License-Identifier: MIT
// The diagnosis rules, one per file in this folder, and the view of RunData they share (steps
// grouped by rank, warm-up dropped). Each rule appends its findings; severity, confidence and
// evidence are its own, deductions are set by diagnose().
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diagnose/finding.h"
#include "diagnose/run_data.h"
#include "diagnose/thresholds.h"
#include "training/protocol.h"

namespace gpumon::diagnose {

struct RankSteps {
  const RankInfo* info = nullptr;
  std::vector<const training::Step*> all;     ///< finite times, in end order
  std::vector<const training::Step*> steady;  ///< `all` without the warm-up steps
  std::int64_t label = 0;                     ///< rank, else pid
};

/// One `action` rank event (what the OOM guard, the adaptive loader or the memory capture did;
/// training/protocol.h's Action), parsed once for every rule that reads it.
struct RankAction {
  const training::RankEvent* event = nullptr;
  training::Action action;
};

struct RunView {
  const RunData& run;
  std::vector<RankSteps> ranks;     ///< ranks with steps, by label
  std::vector<RankAction> actions;  ///< the run's action events, in their order
  /// The ranks are one distributed job whose steps may be compared: at least two, each with a
  /// rank and a world size > 1, no rank twice, and all training at the same time. Processes run
  /// one after another, or side by side without RANK/WORLD_SIZE, are separate jobs.
  bool one_job = false;
  /// Every rank with steps named the CPU as its device: GPU advice (feed the GPU, pin memory,
  /// NCCL) does not apply. A rank that named no device is not counted as a CPU one.
  bool cpu_only = false;
};
RunView make_view(const RunData& run, const Thresholds& t);

/// Weighted mean of a GPU field over points inside [t0, t1] (ms); nullopt without values.
template <typename Get>
std::optional<double> mean_between(const GpuSeries& g, std::int64_t t0, std::int64_t t1, Get get) {
  double sum = 0, n = 0;
  for (const auto& p : g.points) {
    if (p.t_ms + p.span_ms < t0 || p.t_ms > t1) continue;
    const std::optional<double> v = get(p);
    if (!v) continue;
    sum += *v * p.samples, n += p.samples;
  }
  return n > 0 ? std::optional<double>(sum / n) : std::nullopt;
}

/// The data wait of `steps`, of those that measured it (training::WaitTally).
training::WaitTally wait_tally(const std::vector<const training::Step*>& steps);
/// What a rule says where a rank's data wait was not measured (coverage.cc lists it).
inline constexpr const char* kWaitUnmeasured =
    "data wait not measured: the loader was not wrapped (for batch in mon.wrap(loader)) and no "
    "trainer callback timed the fetch, so the step time includes the wait unseen";

/// The [first step start, last step end] span of a rank in ms.
std::pair<std::int64_t, std::int64_t> step_span_ms(const RankSteps& r);
std::string fmt(double v, int decimals = 1);
/// "rank N", or "pid N" for a process without a rank.
std::string who(const RankSteps& r);
std::string fmt_bytes(double bytes);
/// The time range of several findings' parts.
void widen_range(Finding& f, std::int64_t t0, std::int64_t t1);

/// What to do about a loader that keeps up most of the time but stalls now and then
/// (data_loader_stall's "a few long waits", step_pauses' pauses of data wait).
inline constexpr const char* kBurstyLoaderAdvice =
    "The loader keeps up most of the time but stalls now and then: a shard or file boundary, a "
    "slow storage read, workers restarted each epoch (persistent_workers=True) or one slow "
    "sample; prefetch the next shard in the background, raise prefetch_factor so the queue "
    "absorbs the burst (mon.wrap(loader, adapt=True) runs a prefetch stage whose depth adapts: "
    "docs/adaptive-loader.md), and look for the slow samples or files.";

/// A rank's usual step period (the median time between step ends after warm-up, >= 5 steps)
/// and the silences that count as a hang (hang.cc): `limit` for a rank that resumed or is still
/// connected, `stopped_limit` for one that left while silent. step_pauses looks below `limit`.
struct StepPeriod {
  double period_s = 0, limit_s = 0, stopped_limit_s = 0;
};
std::optional<StepPeriod> step_period(const RankSteps& r, const Thresholds& t);

void check_data_loader_stall(const RunView& v, const Thresholds& t, std::vector<Finding>& out);
void check_launch_bound(const RunView& v, const Thresholds& t, std::vector<Finding>& out);
void check_throttled(const RunView& v, const Thresholds& t, std::vector<Finding>& out);
void check_rank_wait(const RunView& v, const Thresholds& t, std::vector<Finding>& out);
void check_memory(const RunView& v, const Thresholds& t, std::vector<Finding>& out);
void check_multi_gpu(const RunView& v, const Thresholds& t, std::vector<Finding>& out);
void check_hang(const RunView& v, const Thresholds& t, std::vector<Finding>& out);
void check_hardware(const RunView& v, const Thresholds& t, std::vector<Finding>& out);
void check_run_end(const RunView& v, const Thresholds& t, std::vector<Finding>& out);
void check_step_pauses(const RunView& v, const Thresholds& t, std::vector<Finding>& out);
void check_host_memory_leak(const RunView& v, const Thresholds& t, std::vector<Finding>& out);
void check_cpu_straggler(const RunView& v, const Thresholds& t, std::vector<Finding>& out);
void check_actions(const RunView& v, const Thresholds& t, std::vector<Finding>& out);

/// What the adaptive loader did on the run (its `loader_*` actions, actions.cc): how many, the
/// newest worker count, prefetch factor and prefetch depth it set, and whether it said more
/// workers stopped helping. nullopt when no rank sent a loader action (the loader was not on).
struct LoaderActions {
  int actions = 0;
  std::optional<std::int64_t> num_workers, prefetch_factor, prefetch_depth;
  bool limited = false;
};
std::optional<LoaderActions> loader_actions(const RunView& v);

/// Process `pid`'s OOM guard split a batch after a CUDA OOM: the OOMs it caught are the guard's
/// (oom_guard), not an `oom` finding of their own.
bool guard_split_after_oom(const RunView& v, std::int64_t pid);

/// Process `pid`'s newest action named `name`; nullptr when it sent none. The adaptive loader's
/// last `loader_retuned` of a process splits its steps: the data wait before it is
/// loader_tuned's "before", not a stall or pauses of the run (data_loader_stall judges the steps
/// after it).
const RankAction* last_action(const RunView& v, std::int64_t pid, std::string_view name);

/// The step ran from the action on: by step number when the action names the step it applies
/// from, else by the step's start against the event's time.
bool from_action_on(const training::Step& s, const RankAction& a);

}  // namespace gpumon::diagnose

namespace gpumon::diagnose {

/// One rank consistently slower than the others (multi_gpu.cc; rank_wait reads it too).
struct Straggler {
  const RankSteps* rank = nullptr;
  std::string measure;     ///< "gpu_step_s", "cpu_step_s" or "data_wait_s"
  double ratio = 0;        ///< its median / the others' median (data wait: extra share of step)
  double consistency = 0;  ///< share of aligned steps where it was the slowest
  double steps = 0;
};
std::optional<Straggler> find_straggler(const RunView& v, const Thresholds& t);

/// The share of a GPU's busy samples (utilization over `busy_util_pct`) below max clocks for a
/// thermal, power or hardware reason.
double busy_throttle_share(const GpuSeries& g, const Thresholds& t);
/// Rank `r`'s GPU throttles (busy_throttle_share over `throttle_share`) and no other rank's GPU
/// throttles even half as much: a throttle other ranks' GPUs show without being slow does not
/// explain this rank's slowness.
bool throttled_more_than_others(const RunView& v, const RankSteps& r, const Thresholds& t);

/// A straggler finding's summary and evidence, in one wording for a node's (multi_gpu.cc) and a
/// job's across nodes (diagnose/job): `where` follows the rank's name (" (node b GPU 1)" or ""),
/// `others` names what it is compared with ("the others", "the job's other 15 ranks").
void describe_straggler(Finding& f, const Straggler& s, const std::string& where,
                        const std::string& others, const std::string& cause);

/// Steps every rank (>= 2, with GPU times) reported, aligned by step number: per step, each
/// rank's GPU time over the slowest rank's GPU time that step, and the slowest GPU time over
/// the step's longest CPU time (how busy the busiest GPU was).
struct AlignedGpuSteps {
  std::vector<const RankSteps*> ranks;
  std::vector<std::vector<double>> share_of_slowest;  ///< [rank][aligned step]
  std::vector<double> busiest_share;                  ///< [aligned step]
};
AlignedGpuSteps align_gpu_steps(const RunView& v, const Thresholds& t);

}  // namespace gpumon::diagnose
