// SPDX-License-Identifier: MIT
// cpu_straggler: in one job whose collectives make every rank's step time equal, the rank that
// spends the most CPU seconds per step (the node's /proc samples). It names the slow rank
// where there is no GPU activity to compare (CPU training, gloo), so only when find_straggler
// names no rank: one finding per problem.
#include <algorithm>
#include <cmath>
#include <map>

#include "diagnose/rules/rules.h"
#include "diagnose/stats.h"

namespace gpumon::diagnose {
namespace {

// A rank's own CPU seconds (its workers' are data loading, which data_wait_s already shows)
// as a function of time, and its step ends on the same clock (the agent's).
struct RankCpu {
  const RankSteps* rank = nullptr;
  std::vector<std::pair<std::int64_t, double>> cpu;  // (time_ms, cpu_s), in time order
  std::vector<std::int64_t> step_ms;                 // steady steps' arrival, in order
};

// Linear interpolation of the CPU seconds at `ms` (inside the samples' span).
double cpu_at(const RankCpu& r, std::int64_t ms) {
  const auto it = std::lower_bound(r.cpu.begin(), r.cpu.end(), ms,
                                   [](const auto& p, std::int64_t m) { return p.first < m; });
  if (it == r.cpu.begin()) return it->second;
  if (it == r.cpu.end()) return r.cpu.back().second;
  const auto& a = *(it - 1);
  const auto& b = *it;
  const double w = b.first == a.first
                       ? 1.0
                       : static_cast<double>(ms - a.first) / static_cast<double>(b.first - a.first);
  return a.second + w * (b.second - a.second);
}

double steps_between(const RankCpu& r, std::int64_t t0, std::int64_t t1) {
  const auto a = std::lower_bound(r.step_ms.begin(), r.step_ms.end(), t0);
  const auto b = std::lower_bound(r.step_ms.begin(), r.step_ms.end(), t1);
  return static_cast<double>(b - a);
}

}  // namespace

void check_cpu_straggler(const RunView& v, const Thresholds& t, std::vector<Finding>& out) {
  if (!v.one_job || v.run.process_samples.empty()) return;
  if (find_straggler(v, t)) return;  // the step times or the GPUs name it: `straggler` says so
  std::map<std::int64_t, std::vector<std::pair<std::int64_t, double>>> cpu_by_pid;
  for (const auto& s : v.run.process_samples)
    if (s.cpu_s) cpu_by_pid[s.pid].emplace_back(s.time_ms, *s.cpu_s);
  std::vector<RankCpu> ranks;
  std::int64_t t0 = 0, t1 = INT64_MAX;
  for (const auto& r : v.ranks) {
    if (!r.info || static_cast<int>(r.steady.size()) < t.min_steps) return;
    auto it = cpu_by_pid.find(r.info->pid);
    if (it == cpu_by_pid.end() || it->second.size() < 2) return;  // every rank, or none
    RankCpu rc;
    rc.rank = &r;
    rc.cpu = std::move(it->second);
    std::sort(rc.cpu.begin(), rc.cpu.end());
    for (const auto* s : r.steady) rc.step_ms.push_back(s->received_ms);
    std::sort(rc.step_ms.begin(), rc.step_ms.end());
    // The span where the rank trained steadily and was sampled.
    t0 = std::max({t0, rc.cpu.front().first, rc.step_ms.front()});
    t1 = std::min({t1, rc.cpu.back().first, rc.step_ms.back()});
    ranks.push_back(std::move(rc));
  }
  if (ranks.size() < 2) return;
  const auto window_ms = static_cast<std::int64_t>(t.cpu_straggler_window_s * 1000);
  if (window_ms <= 0 || t1 - t0 < window_ms * t.cpu_straggler_min_windows) return;
  // Per window, each rank's CPU seconds per step; who is highest.
  std::vector<double> highest(ranks.size(), 0);
  double windows = 0;
  for (std::int64_t a = t0; a + window_ms <= t1; a += window_ms) {
    std::size_t arg = 0;
    double best = -1;
    bool all = true;
    for (std::size_t i = 0; i < ranks.size() && all; ++i) {
      const double n = steps_between(ranks[i], a, a + window_ms);
      if (n < 1) {
        all = false;
        break;
      }
      const double per_step = (cpu_at(ranks[i], a + window_ms) - cpu_at(ranks[i], a)) / n;
      if (per_step > best) best = per_step, arg = i;
    }
    if (!all) continue;
    ++windows, ++highest[arg];
  }
  if (windows < t.cpu_straggler_min_windows) return;
  const auto top =
      static_cast<std::size_t>(std::max_element(highest.begin(), highest.end()) - highest.begin());
  // Over the whole span: CPU seconds per step of each rank, and the top one's cores.
  std::vector<double> per_step(ranks.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const double n = std::max(steps_between(ranks[i], t0, t1), 1.0);
    per_step[i] = (cpu_at(ranks[i], t1) - cpu_at(ranks[i], t0)) / n;
  }
  std::vector<double> others;
  for (std::size_t i = 0; i < ranks.size(); ++i)
    if (i != top) others.push_back(per_step[i]);
  const double others_median = *median_of(others);
  const double ratio = others_median > 0 ? per_step[top] / others_median : INFINITY;
  const double share = highest[top] / windows;
  const double cores =
      (cpu_at(ranks[top], t1) - cpu_at(ranks[top], t0)) / (static_cast<double>(t1 - t0) / 1000.0);
  if (share < t.straggler_consistency || ratio < t.cpu_straggler_ratio ||
      cores < t.cpu_straggler_min_cores)
    return;

  const RankSteps& r = *ranks[top].rank;
  Finding f;
  f.id = "cpu_straggler";
  f.severity = Severity::kWarning;
  f.confidence = confidence_of(windows, 5.0 * t.cpu_straggler_min_windows,
                               std::isfinite(ratio) ? ratio : 2 * t.cpu_straggler_ratio,
                               t.cpu_straggler_ratio);
  f.title = "CPU straggler";
  f.ranks.push_back(r.label);
  if (r.info->gpu) f.gpus.push_back(*r.info->gpu);
  widen_range(f, t0, t1);
  f.summary = who(r) + " spends " + fmt(std::isfinite(ratio) ? ratio : 0, 1) +
              "x the CPU time per step of the other ranks (" + fmt(per_step[top] * 1000, 0) +
              " ms vs " + fmt(others_median * 1000, 0) + " ms), the most in " +
              fmt(100 * share, 0) + " % of the windows; the others wait for it in the collectives";
  f.add("cpu_ms_per_step", per_step[top] * 1000);
  f.add("others_cpu_ms_per_step", others_median * 1000);
  if (std::isfinite(ratio)) f.add("ratio_vs_others", ratio);
  f.add("most_cpu_share", share);
  f.add("windows", windows);
  f.add("cpu_cores", cores);
  f.advice =
      "This rank does more work than the others each step: an uneven shard or batch (check "
      "the sampler gives every rank the same number and size of samples), extra work on one "
      "rank only (evaluation, logging, checkpointing on rank 0 inside the step), or fewer "
      "cores for it (taskset/cgroup, OMP_NUM_THREADS, another process on its cores).";
  out.push_back(std::move(f));
}

}  // namespace gpumon::diagnose
