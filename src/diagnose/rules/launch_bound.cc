// SPDX-License-Identifier: MIT
// launch_bound: the GPU idles inside steps that do not wait for data (GPU time much below CPU
// time on every rank; or, where GPU time spans the whole step, NVML utilization low while steps
// progress), or NVML calls the GPU busy while GPM says the SMs are mostly idle.
#include <algorithm>
#include <cmath>

#include "diagnose/rules/rules.h"
#include "diagnose/stats.h"

namespace gpumon::diagnose {
namespace {

struct RankRatio {
  const RankSteps* r;
  double gpu_ratio;                  // median gpu_step / cpu_step
  std::optional<double> wait_share;  // nullopt: not measured on enough steps
  double n;
};

// Mean NVML utilization of `g` over samples inside [t0, t1] (ms), and the samples it used. A
// mean, not a median: a 10 Hz sample of a step loop is often all-or-nothing.
std::pair<std::optional<double>, double> mean_util(const GpuSeries& g, std::int64_t t0,
                                                   std::int64_t t1) {
  double sum = 0, n = 0;
  for (const auto& p : g.points)
    if (p.util_pct && p.t_ms >= t0 && p.t_ms + p.span_ms <= t1)
      sum += *p.util_pct * p.samples, n += p.samples;
  if (n == 0) return {std::nullopt, 0};
  return {sum / n, n};
}

// The GPU mostly idle while steps progress, without data wait. A plain mon.step() puts its CUDA
// events at the step boundaries, so GPU time equals the step and the ratio test cannot see a
// host-bound loop; NVML utilization (the share of time a kernel ran) can.
bool check_idle_while_training(const RunView& v, const Thresholds& t, Finding& f) {
  struct Idle {
    const RankSteps* r;
    double util, samples, steps;
    std::optional<double> sm;
    std::int64_t t0, t1;
  };
  std::vector<Idle> idle;
  for (const auto& r : v.ranks) {
    if (static_cast<int>(r.steady.size()) < t.min_steps || !r.info->gpu) continue;
    const GpuSeries* g = find_gpu(v.run, *r.info->gpu);
    if (!g) continue;
    const std::int64_t t0 = std::llround(r.steady.front()->t_start_s * 1000);
    const std::int64_t t1 = std::llround(r.steady.back()->t_end_s * 1000);
    const auto [util, samples] = mean_util(*g, t0, t1);
    if (!util || samples < 10) continue;
    // Any rank keeping its GPU busy: the others wait on it (rank_wait / straggler).
    if (*util >= t.launch_idle_util_pct) return false;
    // Only a rank whose steps measurably do not wait for data: with the wait unknown, an idle
    // GPU may be the loader's (coverage.cc lists the rank as not judged).
    const training::WaitTally w = wait_tally(r.steady);
    if (w.steps < t.min_steps || !w.share() || *w.share() > t.launch_max_data_wait_share) continue;
    if (static_cast<double>(t1 - t0) / 1000 < t.launch_idle_min_s) continue;
    const auto sm = mean_between(*g, t0, t1, [](const GpuPoint& p) { return p.sm_active; });
    idle.push_back({&r, *util, samples, static_cast<double>(r.steady.size()), sm, t0, t1});
  }
  if (idle.empty()) return false;
  const Idle* worst = &idle.front();
  for (const auto& i : idle) {
    f.ranks.push_back(i.r->label);
    if (!std::count(f.gpus.begin(), f.gpus.end(), *i.r->info->gpu))
      f.gpus.push_back(*i.r->info->gpu);
    widen_range(f, i.t0, i.t1);
    if (i.util < worst->util) worst = &i;
  }
  f.confidence = confidence_of(worst->steps, t.full_confidence_steps, worst->util / 100,
                               t.launch_idle_util_pct / 100, false);
  f.summary = "the GPU is busy only " + fmt(worst->util, 0) +
              "% of the time while steps progress (mean NVML utilization)" +
              (worst->sm ? ", " + fmt(*worst->sm * 100, 1) + "% of SMs active (GPM)" : "") +
              ", and the steps do not wait for data";
  f.add("mean_util_pct", worst->util);
  if (worst->sm) f.add("sm_active", *worst->sm);
  f.add("util_samples", worst->samples);
  f.add("steps", worst->steps);
  return true;
}

}  // namespace

void check_launch_bound(const RunView& v, const Thresholds& t, std::vector<Finding>& out) {
  Finding f;
  f.id = "launch_bound";
  f.title = "Host-bound: GPU waits on the CPU";
  std::vector<RankRatio> ratios;
  for (const auto& r : v.ranks) {
    if (static_cast<int>(r.steady.size()) < t.min_steps) continue;
    std::vector<double> ratio;
    for (const auto* s : r.steady)
      if (s->gpu_step_s && std::isfinite(*s->gpu_step_s) && s->cpu_step_s > 0)
        ratio.push_back(std::min(*s->gpu_step_s / s->cpu_step_s, 1.0));
    if (static_cast<int>(ratio.size()) < t.min_steps) continue;
    // A rank whose wait is unknown still counts as busy or not (`best`), but is never named.
    const training::WaitTally w = wait_tally(r.steady);
    const std::optional<double> wait_share = w.steps >= t.min_steps ? w.share() : std::nullopt;
    ratios.push_back({&r, *median_of(ratio), wait_share, static_cast<double>(ratio.size())});
  }
  // Only when no rank keeps its GPU busy: otherwise the low ranks wait on the busy one
  // (rank_wait / straggler).
  double best = 0, worst = 1, n = 0;
  for (const auto& rr : ratios) best = std::max(best, rr.gpu_ratio);
  // Ranks in lock-step whose slow rank changes each step: some GPU is busy every step.
  if (const auto a = align_gpu_steps(v, t); !a.busiest_share.empty())
    best = std::max(best, *median_of(a.busiest_share));
  if (!ratios.empty() && best < t.launch_gpu_ratio) {
    for (const auto& rr : ratios) {
      if (!rr.wait_share || *rr.wait_share > t.launch_max_data_wait_share) continue;
      f.ranks.push_back(rr.r->label);
      if (rr.r->info->gpu) f.gpus.push_back(*rr.r->info->gpu);
      const auto [t0, t1] = step_span_ms(*rr.r);
      widen_range(f, t0, t1);
      if (rr.gpu_ratio < worst) worst = rr.gpu_ratio, n = rr.n;
    }
  }
  if (f.ranks.empty() && check_idle_while_training(v, t, f)) {
    // found by utilization (its evidence is set)
  } else if (!f.ranks.empty()) {
    f.confidence = confidence_of(n, t.full_confidence_steps, worst, t.launch_gpu_ratio, false);
    f.summary = "the GPU works only " + fmt(worst * 100, 0) +
                "% of each step's wall time, and the step does not wait for data";
    f.add("gpu_time_share", worst);
    f.add("steps", n);
  } else {
    // NVML busy, SMs idle (needs GPM). Judged on the samples with the GPU busy.
    // With steps, only while steps progress: a hung collective spins at 100% "busy" with idle
    // SMs, which is the hang finding, not launch overhead.
    std::optional<std::pair<std::int64_t, std::int64_t>> span;
    for (const auto& r : v.ranks) {
      const auto [a0, a1] = step_span_ms(r);
      span = span ? std::make_pair(std::min(span->first, a0), std::max(span->second, a1))
                  : std::make_pair(a0, a1);
    }
    double worst_sm = 1, samples = 0;
    for (const auto& g : v.run.gpus) {
      double busy = 0, sm_sum = 0;  // GPM samples (often read less often than utilization)
      std::int64_t t0 = 0, t1 = 0;
      for (const auto& p : g.points) {
        if (!p.util_pct || !p.sm_active || *p.util_pct < t.busy_util_pct) continue;
        if (span && (p.t_ms < span->first || p.t_ms > span->second)) continue;
        if (busy == 0) t0 = p.t_ms;
        t1 = p.t_ms + p.span_ms;
        busy += p.samples, sm_sum += *p.sm_active * p.samples;
      }
      // Enough busy time (GPM may be read once a second, so time, not a sample count).
      if (busy < 10 || static_cast<double>(t1 - t0) / 1000 < t.launch_min_busy_s) continue;
      const double sm = sm_sum / busy;
      if (sm >= t.launch_sm_active) continue;
      f.gpus.push_back(g.gpu);
      widen_range(f, t0, t1);
      if (sm < worst_sm) worst_sm = sm, samples = busy;
    }
    if (f.gpus.empty()) return;
    for (const auto& r : v.ranks)
      if (r.info->gpu && std::count(f.gpus.begin(), f.gpus.end(), *r.info->gpu))
        f.ranks.push_back(r.label);
    f.confidence = confidence_of(samples, 100, worst_sm, t.launch_sm_active, false);
    f.summary = "NVML reports the GPU busy but only " + fmt(worst_sm * 100, 0) +
                "% of SMs are active (GPM): kernels are too small or too sparse";
    f.add("sm_active_while_busy", worst_sm);
    f.add("busy_samples", samples);
  }
  f.severity = Severity::kWarning;
  f.advice =
      "Give the GPU bigger pieces of work: larger batches, torch.compile or CUDA graphs to cut "
      "launch overhead, fewer host syncs (.item(), .cpu(), printing tensors, "
      "torch.cuda.synchronize) inside the step, and fused optimizers (foreach/fused=True).";
  out.push_back(std::move(f));
}

}  // namespace gpumon::diagnose
