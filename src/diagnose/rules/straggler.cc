// SPDX-License-Identifier: MIT
// find_straggler: aligns the ranks' steps by step number and looks for one rank that is the
// slowest in most of them and clearly slower at the median. Measures in order: GPU time of the
// step (when every rank measures it), CPU time (ranks that do not synchronise), data wait (a
// slow loader on one rank, visible even when collectives equalise the step times), then how
// busy each rank's GPU is (lock-step ranks measured by a plain mon.step()).
#include <algorithm>
#include <cmath>
#include <map>

#include "diagnose/rules/rules.h"
#include "diagnose/stats.h"

namespace gpumon::diagnose {
namespace {

using Get = std::optional<double> (*)(const training::Step&);

std::optional<Straggler> by_measure(const RunView& v, const Thresholds& t, const char* name,
                                    Get get, bool additive) {
  std::vector<const RankSteps*> ranks;
  for (const auto& r : v.ranks)
    if (static_cast<int>(r.steady.size()) >= t.min_steps) ranks.push_back(&r);
  if (ranks.size() < 2) return std::nullopt;
  std::vector<std::map<std::int64_t, double>> by_step(ranks.size());
  std::vector<double> medians;
  double mean_cpu = 0, cpu_n = 0;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    std::vector<double> vals;
    for (const auto* s : ranks[i]->steady) {
      mean_cpu += s->cpu_step_s, ++cpu_n;
      const auto x = get(*s);
      if (!x || !std::isfinite(*x)) continue;
      by_step[i][s->step] = *x;
      vals.push_back(*x);
    }
    if (static_cast<int>(vals.size()) < t.min_steps) return std::nullopt;
    medians.push_back(*median_of(vals));
  }
  mean_cpu /= std::max(cpu_n, 1.0);
  std::vector<double> slowest(ranks.size(), 0);
  double aligned = 0;
  for (const auto& [step, x0] : by_step[0]) {
    std::size_t arg = 0;
    double best = -1;
    bool everywhere = true;
    for (std::size_t i = 0; i < ranks.size() && everywhere; ++i) {
      const auto it = by_step[i].find(step);
      if (it == by_step[i].end())
        everywhere = false;
      else if (it->second > best)
        best = it->second, arg = i;
    }
    if (!everywhere) continue;
    ++aligned, ++slowest[arg];
  }
  if (aligned < t.min_steps) return std::nullopt;
  const auto top =
      static_cast<std::size_t>(std::max_element(slowest.begin(), slowest.end()) - slowest.begin());
  std::vector<double> others;
  for (std::size_t i = 0; i < ranks.size(); ++i)
    if (i != top) others.push_back(medians[i]);
  const double rest = *median_of(others);
  const double consistency = slowest[top] / aligned;
  if (consistency < t.straggler_consistency) return std::nullopt;
  double ratio = 0;
  if (additive) {
    // Data wait: the extra wait, as a share of the step, must be a real loss.
    ratio = mean_cpu > 0 ? (medians[top] - rest) / mean_cpu : 0;
    if (ratio < t.straggler_factor - 1 || medians[top] - rest < t.data_wait_min_s)
      return std::nullopt;
  } else {
    if (rest <= 0) return std::nullopt;
    ratio = medians[top] / rest;
    if (ratio < t.straggler_factor) return std::nullopt;
  }
  return Straggler{ranks[top], name, ratio, consistency, aligned};
}

// Ranks in lock-step (a collective each step) take equally long per step, and a plain
// mon.step() measures GPU time as the whole step, so the step times cannot tell who is slow.
// The GPUs can: the straggler's GPU computes the whole step while the others finish early and
// wait in the collective (NCCL spins there: NVML calls it busy but few SMs are active). Compared
// per second over the time every rank trained: GPM SM activity when every GPU has it, else NVML
// utilization.
std::optional<Straggler> by_gpu_activity(const RunView& v, const Thresholds& t) {
  std::vector<const RankSteps*> ranks;
  std::vector<const GpuSeries*> gpus;
  std::int64_t t0 = 0, t1 = 0;
  double steps = 0;
  for (const auto& r : v.ranks) {
    if (static_cast<int>(r.steady.size()) < t.min_steps || !r.info->gpu) continue;
    const GpuSeries* g = find_gpu(v.run, *r.info->gpu);
    if (!g || std::count(gpus.begin(), gpus.end(), g)) return std::nullopt;  // GPU shared
    const std::int64_t a = std::llround(r.steady.front()->t_start_s * 1000);
    const std::int64_t b = std::llround(r.steady.back()->t_end_s * 1000);
    t0 = ranks.empty() ? a : std::max(t0, a), t1 = ranks.empty() ? b : std::min(t1, b);
    steps = ranks.empty() ? static_cast<double>(r.steady.size())
                          : std::min(steps, static_cast<double>(r.steady.size()));
    ranks.push_back(&r), gpus.push_back(g);
  }
  if (ranks.size() < 2 || t1 <= t0) return std::nullopt;
  bool gpm = true;
  for (const auto* g : gpus)
    gpm = gpm && std::any_of(g->points.begin(), g->points.end(), [&](const GpuPoint& p) {
            return p.sm_active && p.t_ms >= t0 && p.t_ms <= t1;
          });
  auto value = [&](const GpuPoint& p) {
    return gpm ? p.sm_active
               : (p.util_pct ? std::optional<double>(*p.util_pct / 100) : std::nullopt);
  };
  // Per-second means of each GPU (the same second on every GPU).
  const auto seconds = static_cast<std::size_t>((t1 - t0) / 1000);
  std::vector<std::vector<double>> sum(gpus.size(), std::vector<double>(seconds, 0)),
      n(gpus.size(), std::vector<double>(seconds, 0));
  for (std::size_t i = 0; i < gpus.size(); ++i)
    for (const auto& p : gpus[i]->points) {
      const auto x = value(p);
      if (!x || p.span_ms > 1000 || p.t_ms < t0) continue;
      const auto k = static_cast<std::size_t>((p.t_ms - t0) / 1000);
      if (k < seconds) sum[i][k] += *x * p.samples, n[i][k] += p.samples;
    }
  std::vector<double> busiest(gpus.size(), 0), total(gpus.size(), 0);
  double windows = 0;
  for (std::size_t k = 0; k < seconds; ++k) {
    bool all = true;
    for (std::size_t i = 0; i < gpus.size(); ++i) all = all && n[i][k] > 0;
    if (!all) continue;
    std::size_t arg = 0;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      total[i] += sum[i][k] / n[i][k];
      if (sum[i][k] / n[i][k] > sum[arg][k] / n[arg][k]) arg = i;
    }
    ++busiest[arg], ++windows;
  }
  if (windows < t.straggler_min_windows) return std::nullopt;
  const auto top =
      static_cast<std::size_t>(std::max_element(total.begin(), total.end()) - total.begin());
  std::vector<double> others;
  for (std::size_t i = 0; i < gpus.size(); ++i)
    if (i != top) others.push_back(total[i] / windows);
  const double mine = total[top] / windows, rest = *median_of(others);
  const double second = *std::max_element(others.begin(), others.end());
  // A GPU that is itself mostly idle paces nothing (every rank host-bound: launch_bound).
  if (mine < (gpm ? t.launch_sm_active : t.busy_util_pct / 100) || rest <= 0) return std::nullopt;
  const double consistency = busiest[top] / windows;
  // Two GPUs equally busy above the rest are two slow ranks (imbalance), not one straggler:
  // which of them wins a second is noise, and once in a while it is the same one 60 % of
  // the time.
  if (mine / rest < t.straggler_factor || mine / second < t.straggler_factor ||
      consistency < t.straggler_consistency)
    return std::nullopt;
  return Straggler{ranks[top], gpm ? "sm_active" : "gpu_util", mine / rest, consistency, steps};
}

}  // namespace

std::optional<Straggler> find_straggler(const RunView& v, const Thresholds& t) {
  if (!v.one_job) return std::nullopt;  // separate jobs' steps say nothing of each other
  if (auto s = by_measure(
          v, t, "gpu_step_s", [](const training::Step& st) { return st.gpu_step_s; }, false))
    return s;
  if (auto s = by_measure(
          v, t, "data_wait_s", [](const training::Step& st) { return st.data_wait_s; }, true))
    return s;
  if (auto s = by_measure(
          v, t, "cpu_step_s",
          [](const training::Step& st) { return std::optional<double>(st.cpu_step_s); }, false))
    return s;
  return by_gpu_activity(v, t);
}

void describe_straggler(Finding& f, const Straggler& s, const std::string& where,
                        const std::string& others, const std::string& cause) {
  const std::string rank = "rank " + std::to_string(s.rank->label);
  if (s.measure == "sm_active" || s.measure == "gpu_util")
    f.summary = rank + "'s GPU" + where + " works x" + fmt(s.ratio, 2) + " as much as " + others +
                "' (" + (s.measure == "sm_active" ? "GPM SM activity" : "NVML utilization") +
                ", busiest in " + fmt(s.consistency * 100, 0) +
                "% of seconds) while step times match: " + others +
                " wait for it; likely cause: " + cause;
  else
    f.summary = rank + where + " is the slowest in " + fmt(s.consistency * 100, 0) +
                "% of steps (" + s.measure + " " +
                (s.measure == "data_wait_s" ? "+" + fmt(s.ratio * 100, 0) + "% of the step"
                                            : "x" + fmt(s.ratio, 2)) +
                " vs " + others + "); likely cause: " + cause;
  f.add("measure", s.measure);
  f.add("ratio_vs_others", s.ratio);
  f.add("slowest_share", s.consistency);
  f.add("aligned_steps", s.steps);
  f.add("likely_cause", cause);
}

AlignedGpuSteps align_gpu_steps(const RunView& v, const Thresholds& t) {
  AlignedGpuSteps a;
  if (!v.one_job) return a;
  std::vector<std::map<std::int64_t, const training::Step*>> by_step;
  for (const auto& r : v.ranks) {
    std::map<std::int64_t, const training::Step*> m;
    for (const auto* s : r.steady)
      if (s->gpu_step_s && std::isfinite(*s->gpu_step_s) && *s->gpu_step_s >= 0) m[s->step] = s;
    if (static_cast<int>(m.size()) < t.min_steps) continue;
    a.ranks.push_back(&r);
    by_step.push_back(std::move(m));
  }
  if (a.ranks.size() < 2) return {};
  a.share_of_slowest.resize(a.ranks.size());
  for (const auto& [step, first] : by_step[0]) {
    std::vector<const training::Step*> row;
    for (const auto& m : by_step) {
      const auto it = m.find(step);
      if (it == m.end()) break;
      row.push_back(it->second);
    }
    if (row.size() != by_step.size()) continue;
    double slowest = 0, longest = 0;
    for (const auto* s : row)
      slowest = std::max(slowest, *s->gpu_step_s), longest = std::max(longest, s->cpu_step_s);
    if (slowest <= 0 || longest <= 0) continue;
    for (std::size_t i = 0; i < row.size(); ++i)
      a.share_of_slowest[i].push_back(*row[i]->gpu_step_s / slowest);
    a.busiest_share.push_back(std::min(slowest / longest, 1.0));
  }
  if (static_cast<int>(a.busiest_share.size()) < t.min_steps) return {};
  return a;
}

}  // namespace gpumon::diagnose
