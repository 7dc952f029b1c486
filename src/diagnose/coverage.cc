// SPDX-License-Identifier: MIT
#include "diagnose/coverage.h"

#include <algorithm>
#include <cstdint>

namespace gpumon::diagnose {

namespace {

bool any_step(const RunView& v, bool (*has)(const training::Step&)) {
  return std::any_of(v.run.steps.begin(), v.run.steps.end(), has);
}

std::string ranks_text(const std::vector<const RankSteps*>& ranks) {
  std::string s;
  for (const auto* r : ranks) s += (s.empty() ? "" : ", ") + who(*r);
  return s;
}

}  // namespace

std::vector<NotJudged> list_not_judged(const RunView& v, const Thresholds& t) {
  std::vector<NotJudged> out;
  const auto& run = v.run;
  std::size_t samples = 0;
  for (const auto& g : run.gpus) samples += g.points.size();
  if (samples == 0)
    out.push_back({"throttled, ecc_errors, xid, gpu_lost, idle_gpu, oom_forecast, foreign_memory",
                   run.gpus.empty() ? "no GPU was seen (no NVML driver, or no GPU on this machine)"
                                    : "no GPU sample was recorded"});
  if (v.ranks.empty()) {
    out.push_back(
        {"data_loader_stall, step_pauses, launch_bound, hang, straggler, rank_wait, "
         "memory_leak, fragmentation, run_failed (exceptions)",
         "no training steps were recorded: add `import gpumon` and gpumon.start(), or "
         "run the script under `gpumon record -- python train.py`"});
    return out;
  }
  // Too short: the step rules skip a rank with fewer steady steps.
  std::vector<const RankSteps*> short_ranks;
  for (const auto& r : v.ranks)
    if (static_cast<int>(r.steady.size()) < t.min_steps) short_ranks.push_back(&r);
  if (!short_ranks.empty())
    out.push_back({"data_loader_stall, step_pauses, launch_bound, straggler, memory_leak on " +
                       ranks_text(short_ranks),
                   "run too short: fewer than " + std::to_string(t.min_steps) +
                       " steps after the " + std::to_string(t.warmup_steps) + " warm-up steps"});
  // A rank whose steps never measured their data wait: a loader stall is not seen, and an idle
  // GPU cannot be told from the loader's.
  std::vector<const RankSteps*> unmeasured;
  for (const auto& r : v.ranks)
    if (static_cast<int>(r.steady.size()) >= t.min_steps &&
        wait_tally(r.steady).steps < t.min_steps)
      unmeasured.push_back(&r);
  if (!unmeasured.empty())
    out.push_back(
        {"data_loader_stall, launch_bound on " + ranks_text(unmeasured), kWaitUnmeasured});
  // Host memory and CPU time come from the node's samples of the ranks (process_watcher.h).
  const auto& ps = run.process_samples;
  if (ps.empty()) {
    // The node reads each connected rank once a second (node/process_watcher.h): ranks that
    // were connected for less than that may never have been read.
    std::int64_t first = INT64_MAX, last = INT64_MIN;
    auto seen = [&](std::int64_t ms) { first = std::min(first, ms), last = std::max(last, ms); };
    for (const auto& e : run.rank_events) seen(e.time_ms);
    for (const auto& s : run.steps) seen(s.received_ms);  // connected, if no bye was recorded
    const bool brief = first <= last && last - first < 2000;
    out.push_back({"host_memory_leak, cpu_straggler",
                   brief ? "no process samples: the ranks were connected for " +
                               fmt((last - first) / 1000.0) +
                               " s, and gpumon reads their host memory and CPU time once a second"
                         : "no process samples: the ranks' host memory and CPU time were not "
                           "read (a recording made before gpumon sampled them, or ranks gpumon "
                           "could not see)"});
  } else if (std::none_of(ps.begin(), ps.end(), [](const auto& p) { return p.pss_bytes; }))
    out.push_back({"host_memory_leak",
                   "host memory unreadable: /proc/PID/smaps_rollup and statm "
                   "could not be read"});
  if (v.cpu_only) {
    out.push_back(
        {"launch_bound, throttled, memory_leak, fragmentation, oom_forecast for the run",
         "the ranks run on the CPU: no GPU time, GPU samples or CUDA allocator to judge"});
    return out;
  }
  if (!any_step(v, [](const training::Step& s) { return s.allocated_bytes.has_value(); }))
    out.push_back({"memory_leak, fragmentation, allocator_cache",
                   "no allocator stats: the steps carried no torch.cuda.memory_stats() (CUDA "
                   "not in use when gpumon started, or a client that does not send them)"});
  if (!any_step(v, [](const training::Step& s) { return s.gpu_step_s.has_value(); }))
    out.push_back({"launch_bound (GPU time), rank_wait, straggler (GPU time)",
                   "no GPU step time: the steps carried no CUDA-event timing; judged from NVML "
                   "utilization where the rank's GPU is known"});
  std::vector<const RankSteps*> unknown;
  for (const auto& r : v.ranks)
    if (!r.info->gpu && r.info->device != std::optional<std::string>("cpu")) unknown.push_back(&r);
  if (!unknown.empty() && !run.gpus.empty())
    out.push_back(
        {"GPU-side checks (launch_bound, throttled, idle_gpu, straggler by GPU "
         "activity) for " +
             ranks_text(unknown),
         "device unknown: the process named no GPU that maps to one of this machine's "
         "(start gpumon after choosing the device, or set CUDA_DEVICE_ORDER=PCI_BUS_ID)"});
  return out;
}

std::optional<std::set<unsigned>> run_gpus(const RunView& v) {
  if (v.run.ranks.empty()) return std::nullopt;
  std::set<unsigned> out;
  for (const auto& r : v.run.ranks) {
    if (r.gpu)
      out.insert(*r.gpu);
    else if (r.device != std::optional<std::string>("cpu"))
      return std::nullopt;  // somewhere unknown: every GPU may be the run's
  }
  return out;
}

}  // namespace gpumon::diagnose
