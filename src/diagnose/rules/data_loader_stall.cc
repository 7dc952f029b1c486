// SPDX-License-Identifier: MIT
// data_loader_stall: per rank, the share of step time blocked on the next batch (after warm-up).
#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

#include "diagnose/rules/rules.h"
#include "diagnose/stats.h"
#include "training/protocol.h"

namespace gpumon::diagnose {

namespace {

// How the wait is spread over the steps: the share of it the slowest 5 % of steps hold, and
// the median step's wait. Every step waiting alike (share near 5 %) wants more workers; a few
// long waits (share near 1: a shard boundary, a slow read) want the next shard prefetched.
struct WaitShape {
  double tail_share = 0, median_s = 0, tail_steps_share = 0;
};

using Steps = std::vector<const training::Step*>;

WaitShape wait_shape(const Steps& steps) {
  std::vector<double> waits;
  for (const auto* s : steps) waits.push_back(s->data_wait_s.value_or(0));
  std::sort(waits.begin(), waits.end(), std::greater<>());
  const std::size_t tail = std::max<std::size_t>(1, waits.size() / 20);
  double total = 0, in_tail = 0;
  for (std::size_t i = 0; i < waits.size(); ++i) (i < tail ? in_tail : total) += waits[i];
  total += in_tail;
  WaitShape w;
  w.tail_share = total > 0 ? in_tail / total : 0;
  w.median_s = *median_of(waits);
  w.tail_steps_share = static_cast<double>(tail) / static_cast<double>(waits.size());
  return w;
}

// The steps judged, those whose wait was measured: where the adaptive loader retuned this
// process's DataLoader, those after its last retune, when at least `min_steps` are left (the
// stall is what it reached, not the epochs it measured to get there; loader_tuned tells the
// before); else every steady step.
Steps judged_steps(const RunView& v, const RankSteps& r, int min_steps) {
  Steps measured, after;
  for (const auto* s : r.steady)
    if (s->data_wait_s) measured.push_back(s);
  const RankAction* last = last_action(v, r.info->pid, "loader_retuned");
  if (!last) return measured;
  for (const auto* s : measured)
    if (from_action_on(*s, *last)) after.push_back(s);
  return static_cast<int>(after.size()) >= min_steps ? after : measured;
}

// How many DataLoader workers would keep up, from the run's own numbers: the worker processes
// the node saw under the rank (the median over its judged span; nullopt without process
// samples), the time a batch takes one worker to load, and the compute left in a step. With
// n workers behind every step, a batch takes n x step to load; in-process loading (n = 0) takes
// the wait. The 1.5x head-room is the adaptive loader's default margin, the model it jumps by.
struct WorkerAdvice {
  std::optional<std::int64_t> seen;
  double load_s = 0;
  std::int64_t suggested = 0;
};

std::optional<WorkerAdvice> suggest_workers(const RunView& v, std::int64_t pid, double wait_s,
                                            double step_s, std::int64_t t0, std::int64_t t1) {
  const double compute_s = step_s - wait_s;
  if (compute_s < 1e-3) return std::nullopt;  // nothing left to hide the loading behind
  std::vector<double> workers;
  for (const auto& p : v.run.process_samples)
    if (p.pid == pid && p.time_ms >= t0 && p.time_ms <= t1) workers.push_back(p.workers);
  WorkerAdvice a;
  if (const auto m = median_of(workers)) a.seen = std::llround(*m);
  const std::int64_t n = a.seen.value_or(0);
  a.load_s = n > 0 ? static_cast<double>(n) * step_s : wait_s;
  // At least one more than seen (2 for in-process loading), at most 64: std::min last, as
  // the floor passes 64 where more were seen.
  a.suggested = std::min<std::int64_t>(
      std::max<std::int64_t>(std::llround(std::ceil(a.load_s / compute_s * 1.5)),
                             std::max<std::int64_t>(n + 1, 2)),
      64);
  return a;
}

// Workers the advice sets at most: more than most nodes have cores for beside their ranks.
constexpr std::int64_t kMaxAdvisedWorkers = 16;

// "it loaded with num_workers 2 (the worker processes gpumon saw), ...": the advice's numbers.
std::string worker_numbers(const WorkerAdvice& a, double compute_s, std::size_t ranks) {
  std::string text = a.seen ? "it loaded with num_workers " + std::to_string(*a.seen) +
                                  " (the worker processes gpumon saw under the rank)"
                            : "gpumon did not see its worker processes";
  text += ", a batch takes about " + fmt(a.load_s * 1000) + " ms to load" +
          (a.seen.value_or(0) > 0 ? " per worker" : "") + " against " + fmt(compute_s * 1000) +
          " ms of compute a step: num_workers=" + std::to_string(a.suggested) +
          " keeps up with 1.5x head-room";
  if (ranks > 1)
    text += " (" + std::to_string(a.suggested * static_cast<std::int64_t>(ranks)) +
            " worker processes for the " + std::to_string(ranks) +
            " ranks: the node needs the cores for them besides the ranks' own)";
  if (a.suggested > kMaxAdvisedWorkers)
    text += "; more workers than most nodes have cores for, so make each batch cheaper too";
  return text;
}

}  // namespace

void check_data_loader_stall(const RunView& v, const Thresholds& t, std::vector<Finding>& out) {
  Finding f;
  double worst = 0, worst_wait = 0, worst_step = 0, worst_n = 0;
  std::int64_t worst_rank = 0, worst_pid = 0, worst_t0 = 0, worst_t1 = 0;
  std::string worst_who;
  Steps worst_steps;
  for (const auto& r : v.ranks) {
    if (static_cast<int>(r.steady.size()) < t.min_steps) continue;
    const Steps steps = judged_steps(v, r, t.min_steps);
    if (static_cast<int>(steps.size()) < t.min_steps) continue;  // coverage.cc says why
    const training::WaitTally tally = wait_tally(steps);
    const double n = static_cast<double>(tally.steps), wait = tally.wait_s, cpu = tally.step_s;
    if (!tally.share()) continue;
    const double share = *tally.share();
    if (share < t.data_wait_share || wait / n < t.data_wait_min_s) continue;
    f.ranks.push_back(r.label);
    if (r.info->gpu) f.gpus.push_back(*r.info->gpu);
    // Where only the steps after a retune are judged, the finding spans them alone.
    const auto [t0, t1] =
        steps.size() == r.steady.size()
            ? step_span_ms(r)
            : std::pair<std::int64_t, std::int64_t>{std::llround(steps.front()->t_start_s * 1000),
                                                    std::llround(steps.back()->t_end_s * 1000)};
    widen_range(f, t0, t1);
    if (share > worst)
      worst = share, worst_wait = wait / n, worst_step = cpu / n, worst_n = n, worst_rank = r.label,
      worst_who = who(r), worst_steps = steps, worst_pid = r.info->pid, worst_t0 = t0,
      worst_t1 = t1;
  }
  if (f.ranks.empty()) return;
  std::sort(f.gpus.begin(), f.gpus.end());
  f.gpus.erase(std::unique(f.gpus.begin(), f.gpus.end()), f.gpus.end());
  f.id = "data_loader_stall";
  f.severity = worst >= t.data_wait_critical_share ? Severity::kCritical : Severity::kWarning;
  f.confidence = confidence_of(worst_n, t.full_confidence_steps, worst, t.data_wait_share);
  f.title = "Data loader stall";
  f.summary = fmt(worst * 100, 0) + "% of step time waiting for data on " + worst_who + " (" +
              fmt(worst_wait * 1000) + " ms of a " + fmt(worst_step * 1000) + " ms step)";
  const WaitShape shape = wait_shape(worst_steps);
  const bool bursty = shape.tail_share >= t.data_wait_bursty_share;
  f.summary += bursty
                   ? "; a few long waits: the slowest " + fmt(shape.tail_steps_share * 100, 0) +
                         "% of steps hold " + fmt(shape.tail_share * 100, 0) +
                         "% of the wait (median step waits " + fmt(shape.median_s * 1000) + " ms)"
                   : "; every step waits (median " + fmt(shape.median_s * 1000) + " ms)";
  f.add("data_wait_share", worst);
  f.add("mean_data_wait_ms", worst_wait * 1000);
  f.add("mean_step_ms", worst_step * 1000);
  f.add("steps", worst_n);
  f.add("worst_rank", static_cast<double>(worst_rank));
  f.add("ranks_stalled", static_cast<double>(f.ranks.size()));
  f.add("median_data_wait_ms", shape.median_s * 1000);
  f.add("slowest_5pct_wait_share", shape.tail_share);
  // The sawtooth: the GPU's utilization while the rank trained, when its GPU is known.
  for (unsigned gpu : f.gpus)
    if (const auto* g = find_gpu(v.run, gpu))
      if (auto u = mean_between(*g, *f.start_ms, *f.end_ms,
                                [](const GpuPoint& p) { return p.util_pct; })) {
        f.add("gpu" + std::to_string(gpu) + "_mean_util_pct", *u);
      }
  // The adaptive loader was on (its ranks sent loader actions): say what it reached rather
  // than telling the user to turn it on.
  if (const auto loader = loader_actions(v)) {
    f.add("loader_actions", static_cast<double>(loader->actions));
    if (loader->num_workers) f.add("num_workers", static_cast<double>(*loader->num_workers));
    if (loader->prefetch_factor)
      f.add("prefetch_factor", static_cast<double>(*loader->prefetch_factor));
    std::string reached =
        "The adaptive loader (mon.wrap(loader, adapt=True)) was on, and the steps still "
        "wait: it reached num_workers " +
        (loader->num_workers ? std::to_string(*loader->num_workers) : "?") + ", prefetch_factor " +
        (loader->prefetch_factor ? std::to_string(*loader->prefetch_factor) : "?");
    if (loader->prefetch_depth)
      reached += ", a prefetch depth of " + std::to_string(*loader->prefetch_depth);
    reached += loader->limited
                   ? ", and more workers stopped helping (loader_limited): the limit is in the "
                     "Dataset or the storage, not the worker count: look for a lock or a shared "
                     "file handle in __getitem__, slow storage, or decoding that could be done "
                     "once ahead."
                   : ", within its CPU and RAM budgets: give it larger CPU or RAM budgets "
                     "(docs/adaptive-loader.md) or make each sample cheaper: "
                     "decoding/augmentation done once ahead, faster storage.";
    f.advice = reached;
  } else if (bursty) {
    f.advice = kBurstyLoaderAdvice;
  } else {
    const auto workers = suggest_workers(v, worst_pid, worst_wait, worst_step, worst_t0, worst_t1);
    std::string numbers;
    if (workers) {
      if (workers->seen) f.add("num_workers_seen", static_cast<double>(*workers->seen));
      f.add("load_ms_per_batch", workers->load_s * 1000);
      f.add("suggested_num_workers", static_cast<double>(workers->suggested));
      numbers = ": " + worker_numbers(*workers, worst_step - worst_wait, v.ranks.size());
    }
    const std::string raise =
        workers ? "num_workers=" + std::to_string(std::min(workers->suggested, kMaxAdvisedWorkers))
                : "a higher num_workers";
    f.advice =
        v.cpu_only
            ? "Every step waits for its batch" + numbers + ". Set DataLoader(" + raise +
                  ", persistent_workers=True) (the loader and the training share the CPU "
                  "cores: leave the training some), make decoding/augmentation cheaper or do "
                  "it once ahead, and check the storage the data is read from. "
                  "mon.wrap(loader, adapt=True) tunes the workers between epochs within CPU and "
                  "RAM budgets (docs/adaptive-loader.md)."
            : "Every step waits for its batch" + numbers + ". Set DataLoader(" + raise +
                  ", prefetch_factor=4, pin_memory=True, persistent_workers=True), move "
                  "decoding/augmentation off the training process (or to the GPU), and check "
                  "the storage the data is read from. mon.wrap(loader, adapt=True) tunes "
                  "num_workers and prefetch_factor between epochs within CPU and RAM budgets "
                  "(docs/adaptive-loader.md).";
  }
  out.push_back(std::move(f));
}

}  // namespace gpumon::diagnose
