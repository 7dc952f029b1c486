// SPDX-License-Identifier: MIT
// imbalance, straggler, idle_gpu: how work spreads over GPUs and ranks.
#include <algorithm>
#include <cmath>
#include <set>

#include "diagnose/rules/rules.h"
#include "diagnose/stats.h"
#include "diagnose/throttle.h"

namespace gpumon::diagnose {
namespace {

// The time training ran: every rank's steps; without steps, the whole run.
std::pair<std::int64_t, std::int64_t> training_span(const RunView& v) {
  std::optional<std::int64_t> lo, hi;
  for (const auto& r : v.ranks) {
    const auto [a, b] = step_span_ms(r);
    lo = std::min(lo.value_or(a), a), hi = std::max(hi.value_or(b), b);
  }
  if (lo) return {*lo, *hi};
  return {v.run.start_ms.value_or(0), v.run.end_ms.value_or(0)};
}

std::optional<double> util_of(const GpuSeries& g, std::pair<std::int64_t, std::int64_t> span) {
  return mean_between(g, span.first, span.second, [](const GpuPoint& p) { return p.util_pct; });
}

bool has_foreign_process(const RunView& v, unsigned gpu) {
  std::set<std::int64_t> pids;
  for (const auto& r : v.run.ranks) pids.insert(r.pid);
  for (const auto& p : v.run.processes)
    if (p.gpu == gpu && !pids.count(p.pid)) return true;
  return false;
}

void check_straggler(const RunView& v, const Thresholds& t, const std::optional<Straggler>& s,
                     std::vector<Finding>& out) {
  if (!s) return;
  Finding f;
  f.id = "straggler";
  f.severity = Severity::kWarning;
  f.ranks.push_back(s->rank->label);
  const auto gpu = s->rank->info->gpu;
  if (gpu) f.gpus.push_back(*gpu);
  const auto [t0, t1] = step_span_ms(*s->rank);
  widen_range(f, t0, t1);
  std::string cause = "more work per step or a slower GPU";
  std::string advice =
      v.cpu_only ? "Give every rank the same work (batch size, sequence lengths, sharding) and the "
                   "same CPU: other processes on its cores, or more threads than cores "
                   "(torch.set_num_threads, OMP_NUM_THREADS per rank = cores / ranks)."
                 : "Give every rank the same work (batch size, sequence lengths, sharding) and "
                   "compare its GPU with the others'.";
  if (s->measure == "data_wait_s") {
    cause = "its data loader";
    advice =
        "This rank waits for data much longer than the others: check its loader workers, "
        "its shard of the data set and the storage it reads from.";
  } else if (throttled_more_than_others(v, *s->rank, t)) {
    cause = "its GPU is throttled";
    advice = "Its GPU runs below max clocks: see the throttled finding (cooling or power cap).";
  } else if (gpu && has_foreign_process(v, *gpu)) {
    cause = "another process shares its GPU";
    advice = "Move the other process off this GPU (see the processes list).";
  }
  f.confidence =
      confidence_of(s->steps, t.full_confidence_steps, s->consistency, t.straggler_consistency);
  f.title = "Straggler rank " + std::to_string(s->rank->label);
  describe_straggler(f, *s, "", "the others", cause);
  f.advice = advice;
  out.push_back(std::move(f));
}

void check_idle_and_imbalance(const RunView& v, const Thresholds& t, bool straggler,
                              std::vector<Finding>& out) {
  if (v.run.gpus.size() < 2) return;
  const auto span = training_span(v);
  const double span_s = static_cast<double>(span.second - span.first) / 1000;
  bool many_steps = !v.ranks.empty();
  for (const auto& r : v.ranks)
    many_steps = many_steps && static_cast<int>(r.steady.size()) >= t.idle_min_steps;
  if (span_s < t.idle_min_s && !(many_steps && span_s >= t.idle_min_steps_s)) return;
  std::set<unsigned> rank_gpus;
  bool any_rank = false;
  std::int64_t world = 1;
  for (const auto& r : v.ranks) {
    any_rank = true;
    world = std::max(world, r.info->world_size.value_or(1));
    if (r.info->gpu) rank_gpus.insert(*r.info->gpu);
  }
  std::set<std::int64_t> pids;
  for (const auto& r : v.run.ranks) pids.insert(r.pid);
  std::vector<std::pair<unsigned, double>> busy, idle;
  for (const auto& g : v.run.gpus) {
    const auto u = util_of(g, span);
    if (!u) continue;
    bool training_process = rank_gpus.count(g.gpu) > 0;
    bool any_process = false;
    for (const auto& p : v.run.processes)
      if (p.gpu == g.gpu) any_process = true, training_process |= pids.count(p.pid) > 0;
    if (*u >= t.busy_util_pct && (training_process || !any_rank))
      busy.emplace_back(g.gpu, *u);
    else if (*u <= t.idle_util_pct && !training_process && (any_rank || !any_process))
      idle.emplace_back(g.gpu, *u);
  }
  // idle_gpu: others train; warning when more GPUs were meant to train (world size, or two
  // busy GPUs), info when one process trains on a multi-GPU machine (maybe on purpose).
  if (!busy.empty() && !idle.empty() && (any_rank || busy.size() >= 2)) {
    Finding f;
    f.id = "idle_gpu";
    // Without steps nothing says the busy GPUs are one job: info.
    const bool meant =
        any_rank && (world > static_cast<std::int64_t>(busy.size()) || busy.size() >= 2);
    f.severity = meant ? Severity::kWarning : Severity::kInfo;
    f.confidence = confidence_of(static_cast<double>(span.second - span.first) / 1000,
                                 10 * t.idle_min_s, 1, 1);
    std::string list;
    for (const auto& [gpu, u] : idle) {
      f.gpus.push_back(gpu);
      list += (list.empty() ? "" : ", ") + std::to_string(gpu);
      f.add("gpu" + std::to_string(gpu) + "_mean_util_pct", u);
    }
    f.add("busy_gpus", static_cast<double>(busy.size()));
    f.add("world_size", static_cast<double>(world));
    f.start_ms = span.first, f.end_ms = span.second;
    f.title = "GPU idle while others train";
    f.summary = "GPU " + list + " stayed idle while " + std::to_string(busy.size()) +
                " GPU(s) trained" +
                (world > 1 ? " (world size " + std::to_string(world) + ")" : "");
    f.advice =
        "Start one process per GPU (torchrun --nproc_per_node=N) and put each on its own GPU "
        "(torch.cuda.set_device(LOCAL_RANK), device=f\"cuda:{LOCAL_RANK}\"); check "
        "CUDA_VISIBLE_DEVICES.";
    out.push_back(std::move(f));
  }
  if (busy.size() < 2) return;
  std::vector<double> utils, mems;
  std::vector<unsigned> mem_gpus;  // the GPU of each of `mems`
  Finding f;
  for (const auto& [gpu, u] : busy) {
    utils.push_back(u);
    const auto* g = find_gpu(v.run, gpu);
    if (const auto m = mean_between(*g, span.first, span.second,
                                    [](const GpuPoint& p) { return p.mem_used_bytes; }))
      mems.push_back(*m), mem_gpus.push_back(gpu);
  }
  const auto [umin, umax] = std::minmax_element(utils.begin(), utils.end());
  const bool util_off = !straggler &&
                        coefficient_of_variation(utils).value_or(0) >= t.imbalance_cv &&
                        *umax - *umin >= t.imbalance_util_gap_pct;
  bool mem_off = false;
  std::string mem_numbers;  // "GPU 0 holds 61.2 GiB, GPU 3 38.0 GiB"
  if (mems.size() == utils.size()) {
    const auto [mmin, mmax] = std::minmax_element(mems.begin(), mems.end());
    mem_off = coefficient_of_variation(mems).value_or(0) >= t.imbalance_cv &&
              *mmax - *mmin >= t.imbalance_mem_gap_bytes;
    if (mem_off) {
      f.add("memory_gap_bytes", *mmax - *mmin);
      const unsigned most = mem_gpus[static_cast<std::size_t>(mmax - mems.begin())];
      const unsigned least = mem_gpus[static_cast<std::size_t>(mmin - mems.begin())];
      f.add("most_memory_gpu", static_cast<double>(most));
      mem_numbers = "GPU " + std::to_string(most) + " holds " + fmt_bytes(*mmax) + ", GPU " +
                    std::to_string(least) + " " + fmt_bytes(*mmin);
    }
  }
  // Step time of ranks that do not synchronise (a straggler finding covers the rest).
  std::vector<double> steps;
  for (const auto& r : v.ranks) {
    std::vector<double> c;
    for (const auto* s : r.steady) c.push_back(s->cpu_step_s);
    if (static_cast<int>(c.size()) >= t.min_steps) steps.push_back(*median_of(c));
  }
  const bool step_off = !straggler && v.one_job && steps.size() >= 2 &&
                        coefficient_of_variation(steps).value_or(0) >= t.imbalance_cv;
  if (!util_off && !mem_off && !step_off) return;
  f.id = "imbalance";
  // Without steps the busy GPUs may be separate jobs: worth knowing, not a fault.
  f.severity = any_rank ? Severity::kWarning : Severity::kInfo;
  double cv = 0;
  std::string what;
  if (util_off) {
    cv = std::max(cv, *coefficient_of_variation(utils));
    what += "utilization " + fmt(*umin, 0) + "-" + fmt(*umax, 0) + "%";
    f.add("util_cv", *coefficient_of_variation(utils));
    f.add("util_gap_pct", *umax - *umin);
  }
  if (mem_off) {
    cv = std::max(cv, *coefficient_of_variation(mems));
    what += std::string(what.empty() ? "" : ", ") + "memory (" + mem_numbers + ")";
    f.add("memory_cv", *coefficient_of_variation(mems));
  }
  if (step_off) {
    cv = std::max(cv, *coefficient_of_variation(steps));
    what += std::string(what.empty() ? "" : ", ") + "step time";
    f.add("step_time_cv", *coefficient_of_variation(steps));
  }
  for (const auto& [gpu, u] : busy) {
    f.gpus.push_back(gpu);
    f.add("gpu" + std::to_string(gpu) + "_mean_util_pct", u);
  }
  for (const auto& r : v.ranks) f.ranks.push_back(r.label);
  f.start_ms = span.first, f.end_ms = span.second;
  f.confidence = confidence_of(static_cast<double>(busy.size()), 4, cv, t.imbalance_cv);
  f.title = "Work imbalanced across GPUs";
  f.summary = "training GPUs differ in " + what;
  f.advice =
      "Give each rank the same work: equal batch sizes and sequence lengths (bucketing), "
      "balanced model/pipeline sharding, the same data-loader settings; keep extra work "
      "(logging, evaluation, checkpointing) off rank 0 or spread it.";
  if (mem_off)
    f.advice += " The memory gap (" + mem_numbers +
                "): in DDP every rank holds the same model, gradients and optimizer state, so "
                "the extra is what one rank does on its own: other ranks' CUDA contexts on it "
                "(call torch.cuda.set_device(local_rank) before anything touches CUDA; "
                "torch.load(..., map_location=\"cuda:\" + str(local_rank))), evaluation or "
                "checkpoint copies on rank 0, or uneven batches from the sampler (shard with "
                "DistributedSampler, drop_last=True). The GPU's process list shows whose memory "
                "it is; ZeRO/FSDP sharding spreads the optimizer state where that is the "
                "extra.";
  out.push_back(std::move(f));
}

}  // namespace

double busy_throttle_share(const GpuSeries& g, const Thresholds& t) {
  double busy = 0, thr = 0;
  for (const auto& p : g.points) {
    if (!p.util_pct || *p.util_pct < t.busy_util_pct || !p.clock_reasons) continue;
    busy += p.samples, thr += samples_throttled(p, g.max_sm_clock_mhz);
  }
  return busy > 0 ? thr / busy : 0;
}

bool throttled_more_than_others(const RunView& v, const RankSteps& r, const Thresholds& t) {
  const GpuSeries* g = r.info->gpu ? find_gpu(v.run, *r.info->gpu) : nullptr;
  if (!g) return false;
  const double mine = busy_throttle_share(*g, t);
  if (mine < t.throttle_share) return false;
  for (const auto& o : v.ranks)
    if (&o != &r && o.info->gpu)
      if (const GpuSeries* og = find_gpu(v.run, *o.info->gpu);
          og && og != g && busy_throttle_share(*og, t) >= mine / 2)
        return false;
  return true;
}

void check_multi_gpu(const RunView& v, const Thresholds& t, std::vector<Finding>& out) {
  const auto s = find_straggler(v, t);
  check_straggler(v, t, s, out);
  check_idle_and_imbalance(v, t, s.has_value(), out);
}

}  // namespace gpumon::diagnose
