// SPDX-License-Identifier: MIT
// memory_leak, allocator_cache, fragmentation, oom_forecast, oom, foreign_memory.
#include <algorithm>
#include <cmath>
#include <set>

#include "diagnose/rules/rules.h"
#include "diagnose/stats.h"
#include "training/protocol.h"

namespace gpumon::diagnose {
namespace {

using Field = std::optional<std::int64_t> training::Step::*;

// (step index, value) of the steady steps that have `field`.
void series_of(const RankSteps& r, Field field, std::vector<double>& x, std::vector<double>& y) {
  for (const auto* s : r.steady)
    if (const auto& v = s->*field)
      x.push_back(static_cast<double>(s->step)), y.push_back(static_cast<double>(*v));
}

double median_step_s(const RankSteps& r) {
  std::vector<double> c;
  for (const auto* s : r.steady) c.push_back(s->cpu_step_s);
  return median_of(c).value_or(0);
}

std::optional<double> gpu_total(const RunView& v, const RankSteps& r) {
  if (!r.info->gpu) return std::nullopt;
  const auto* g = find_gpu(v.run, *r.info->gpu);
  if (!g) return std::nullopt;
  if (g->memory_total_bytes) return g->memory_total_bytes;
  for (auto it = g->points.rbegin(); it != g->points.rend(); ++it)
    if (it->mem_total_bytes) return it->mem_total_bytes;
  return std::nullopt;
}

// The allocator state the Python client captured when this finding reached it (the
// memory_captured action, docs/python.md): named in the evidence and the advice. Its latest
// message wins (the history snapshot comes after the summary).
void name_memory_capture(const RunView& v, Finding& f) {
  const training::Action* last = nullptr;
  for (const auto& a : v.actions)
    if (a.action.action == "memory_captured" && a.action.finding == f.id && a.action.summary_file)
      last = &a.action;
  if (!last) return;
  f.add("allocator_summary_file", *last->summary_file);
  f.advice += " gpumon wrote the allocator's state when this was found: " + *last->summary_file +
              " (torch.cuda.memory_summary())";
  if (last->snapshot_file) {
    f.add("allocation_history_file", *last->snapshot_file);
    f.advice += (last->history_pending ? ", and is recording the next steps' allocations into "
                                       : ", and the next steps' allocations in ") +
                *last->snapshot_file + " (open it at https://pytorch.org/memory_viz)";
  }
  f.advice += ".";
}

void add_rank(Finding& f, const RankSteps& r) {
  f.ranks.push_back(r.label);
  if (r.info->gpu && !std::count(f.gpus.begin(), f.gpus.end(), *r.info->gpu))
    f.gpus.push_back(*r.info->gpu);
  const auto [t0, t1] = step_span_ms(r);
  widen_range(f, t0, t1);
}

// Per rank: leak (allocated keeps growing), else cache (reserved >> allocated, flat), and
// fragmentation (inactive split or alloc retries). Returns the leaking ranks' slopes.
void check_allocator(const RunView& v, const Thresholds& t, std::vector<Finding>& out) {
  Finding leak, cache, frag;
  double leak_growth = 0, leak_slope = 0, leak_n = 0, leak_first = 0, leak_last = 0;
  double cache_gap = 0, cache_share = 0, frag_split = 0, frag_share = 0, frag_retries = 0,
         frag_ooms = 0, n_frag = 0;
  for (const auto& r : v.ranks) {
    std::vector<double> x, alloc;
    series_of(r, &training::Step::allocated_bytes, x, alloc);
    bool leaking = false;
    if (static_cast<int>(alloc.size()) >= t.leak_min_steps) {
      const double slope = theil_sen_slope(x, alloc).value_or(0);
      const double growth = slope * (x.back() - x.front());
      // The growth must show in the data itself, not only in the fitted line.
      const std::size_t q = alloc.size() / 4;
      const double first_q =
          *median_of({alloc.begin(), alloc.begin() + static_cast<std::ptrdiff_t>(q + 1)});
      const double last_q =
          *median_of({alloc.end() - static_cast<std::ptrdiff_t>(q + 1), alloc.end()});
      if (growth >= t.leak_min_growth_bytes &&
          growth >= t.leak_min_growth_ratio * std::max(first_q, 1.0) &&
          last_q - first_q >= 0.5 * growth) {
        leaking = true;
        add_rank(leak, r);
        if (growth > leak_growth)
          leak_growth = growth, leak_slope = slope, leak_n = static_cast<double>(alloc.size()),
          leak_first = alloc.front(), leak_last = alloc.back();
      }
    }
    // Fragmentation: inactive split share of reserved, or new alloc retries.
    bool fragmented = false;
    std::vector<double> splits, split_bytes;
    std::optional<std::int64_t> r0, r1, o0, o1;  // alloc retries, OOMs
    for (const auto* s : r.steady) {
      if (s->inactive_split_bytes && s->reserved_bytes && *s->reserved_bytes > 0) {
        split_bytes.push_back(static_cast<double>(*s->inactive_split_bytes));
        splits.push_back(split_bytes.back() / static_cast<double>(*s->reserved_bytes));
      }
      if (s->num_alloc_retries) r1 = s->num_alloc_retries, r0 = r0.value_or(*s->num_alloc_retries);
      if (s->num_ooms) o1 = s->num_ooms, o0 = o0.value_or(*s->num_ooms);
    }
    const double retries = r0 ? static_cast<double>(*r1 - *r0) : 0;
    const double split = static_cast<int>(splits.size()) >= t.min_steps ? *median_of(splits) : 0;
    const double split_b = split > 0 ? *median_of(split_bytes) : 0;
    if ((split >= t.frag_split_share && split_b >= t.frag_min_split_bytes) ||
        retries >= t.frag_min_new_retries) {
      fragmented = true;
      add_rank(frag, r);
      frag_split = std::max(frag_split, split_b), frag_share = std::max(frag_share, split);
      frag_retries = std::max(frag_retries, retries);
      if (o0) frag_ooms += static_cast<double>(*o1 - *o0);
      n_frag = std::max(n_frag, static_cast<double>(r.steady.size()));
    }
    // Cache: the median gap reserved - allocated at step end, with reserved flat; not when that
    // gap is the fragmentation's split blocks (one finding, the one to act on).
    std::vector<double> xr, reserved, gaps, shares;
    for (const auto* s : r.steady)
      if (s->reserved_bytes && s->allocated_bytes && *s->reserved_bytes > 0) {
        xr.push_back(static_cast<double>(s->step));
        reserved.push_back(static_cast<double>(*s->reserved_bytes));
        gaps.push_back(static_cast<double>(*s->reserved_bytes - *s->allocated_bytes));
        shares.push_back(gaps.back() / reserved.back());
      }
    if (!leaking && !fragmented && static_cast<int>(reserved.size()) >= t.min_steps) {
      const double gap = *median_of(gaps), share = *median_of(shares);
      const double drift =
          std::fabs(theil_sen_slope(xr, reserved).value_or(0) * (xr.back() - xr.front()));
      if (gap >= t.cache_min_bytes && share >= t.cache_min_share &&
          drift <= 0.05 * *median_of(reserved)) {
        add_rank(cache, r);
        if (gap > cache_gap) cache_gap = gap, cache_share = share;
      }
    }
  }
  if (!leak.ranks.empty()) {
    leak.id = "memory_leak";
    leak.severity = Severity::kWarning;
    leak.confidence =
        confidence_of(leak_n, t.full_confidence_steps, leak_growth, t.leak_min_growth_bytes);
    leak.title = "Memory leak";
    leak.summary = "allocated memory at step end grows by " + fmt_bytes(leak_slope) +
                   " per step (" + fmt_bytes(leak_growth) + " over " + fmt(leak_n, 0) + " steps)";
    leak.add("slope_bytes_per_step", leak_slope);
    leak.add("growth_bytes", leak_growth);
    leak.add("steps", leak_n);
    leak.add("first_allocated_bytes", leak_first);
    leak.add("last_allocated_bytes", leak_last);
    leak.advice =
        "Something keeps tensors alive across steps: accumulating the loss or outputs without "
        ".item()/.detach(), appending tensors to a list, caches keyed per step, or graphs kept "
        "by retain_graph. torch.cuda.memory._record_memory_history() shows who allocates. "
        "(mon.oom_guard(model) only buys time against a leak: it splits the batch as memory "
        "fills, docs/oom-guard.md.)";
    name_memory_capture(v, leak);
    out.push_back(std::move(leak));
  }
  if (!cache.ranks.empty()) {
    cache.id = "allocator_cache";
    cache.severity = Severity::kInfo;
    cache.confidence = confidence_of(1, 1, cache_share, t.cache_min_share);
    cache.title = "Allocator cache (not a leak)";
    cache.summary = fmt_bytes(cache_gap) + " reserved but unallocated (" +
                    fmt(cache_share * 100, 0) +
                    "% of reserved), stable: PyTorch's caching allocator keeps it for reuse";
    cache.add("reserved_minus_allocated_bytes", cache_gap);
    cache.add("share_of_reserved", cache_share);
    cache.advice =
        "Nothing to fix; if other processes need the memory, torch.cuda.empty_cache() "
        "returns it (at a speed cost).";
    out.push_back(std::move(cache));
  }
  if (!frag.ranks.empty()) {
    frag.id = "fragmentation";
    frag.severity = Severity::kWarning;
    frag.confidence = confidence_of(
        n_frag, t.full_confidence_steps,
        std::max(frag_share / t.frag_split_share, frag_retries / t.frag_min_new_retries), 1);
    frag.title = "Allocator fragmentation";
    frag.summary = fmt_bytes(frag_split) + " in inactive split blocks (" +
                   fmt(frag_share * 100, 0) + "% of reserved), " + fmt(frag_retries, 0) +
                   " new alloc retries" +
                   (frag_ooms > 0 ? ", " + fmt(frag_ooms, 0) + " OOMs caught by the program" : "");
    frag.add("inactive_split_bytes", frag_split);
    frag.add("inactive_split_share", frag_share);
    frag.add("new_alloc_retries", frag_retries);
    if (frag_ooms > 0) frag.add("caught_ooms", frag_ooms);
    frag.advice =
        "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (or max_split_size_mb), keep "
        "tensor shapes steady (pad or bucket variable lengths), and preallocate big buffers.";
    out.push_back(std::move(frag));
  }
}

// NVML memory used over the recent window of each GPU, and allocated per step per rank.
void check_forecast(const RunView& v, const Thresholds& t, std::vector<Finding>& out) {
  Finding f;
  double best_min = 1e300, best_slope = 0, best_free = 0;
  std::string from;
  for (const auto& g : v.run.gpus) {
    if (g.points.empty()) continue;
    const std::int64_t last = g.points.back().t_ms + g.points.back().span_ms;
    std::vector<double> x, y;
    std::optional<double> total = g.memory_total_bytes;
    for (const auto& p : g.points) {
      if (p.t_ms < last - static_cast<std::int64_t>(t.oom_window_s * 1000)) continue;
      if (!p.mem_used_bytes) continue;
      x.push_back(static_cast<double>(p.t_ms - last) / 1000), y.push_back(*p.mem_used_bytes);
      if (p.mem_total_bytes) total = p.mem_total_bytes;
    }
    if (x.size() < 20 || !total || x.back() - x.front() < t.oom_min_window_s) continue;
    const double slope = theil_sen_slope(x, y).value_or(0);
    const double growth = slope * (x.back() - x.front());
    // Still growing in the window's second half (not a start-up ramp that has ended).
    const std::size_t half = x.size() / 2;
    const double late = theil_sen_slope({x.begin() + static_cast<std::ptrdiff_t>(half), x.end()},
                                        {y.begin() + static_cast<std::ptrdiff_t>(half), y.end()})
                            .value_or(0);
    if (slope <= 0 || growth < t.oom_min_growth_share * *total || late < 0.5 * slope) continue;
    const double free_b = std::max(*total - y.back(), 0.0);
    const double minutes = free_b / slope / 60;
    if (minutes > t.oom_forecast_min) continue;
    f.gpus.push_back(g.gpu);
    // The ranks on that GPU: whose memory it is, and whom the client's capture answers.
    for (const auto& r : v.ranks)
      if (r.info->gpu == g.gpu && !std::count(f.ranks.begin(), f.ranks.end(), r.label))
        f.ranks.push_back(r.label);
    widen_range(f, last + static_cast<std::int64_t>(x.front() * 1000), last);
    if (minutes < best_min)
      best_min = minutes, best_slope = slope, best_free = free_b, from = "nvml_memory_used";
  }
  // Allocated bytes per step: steps to the GPU's total (counts other memory through NVML's).
  double steps_left = -1;
  for (const auto& r : v.ranks) {
    std::vector<double> x, alloc;
    series_of(r, &training::Step::allocated_bytes, x, alloc);
    if (static_cast<int>(alloc.size()) < t.leak_min_steps) continue;
    const double slope = theil_sen_slope(x, alloc).value_or(0);
    const auto total = gpu_total(v, r);
    const double step_s = median_step_s(r);
    if (slope <= 0 || !total || step_s <= 0 ||
        slope * (x.back() - x.front()) < t.oom_min_growth_share * *total)
      continue;
    // Memory outside allocated (cache, other processes) from NVML's last used value when known.
    double used = alloc.back();
    if (const auto* g = find_gpu(v.run, *r.info->gpu))
      for (auto it = g->points.rbegin(); it != g->points.rend(); ++it)
        if (it->mem_used_bytes) {
          used = std::max(used, *it->mem_used_bytes);
          break;
        }
    const double left = std::max(*total - used, 0.0) / slope;
    const double minutes = left * step_s / 60;
    if (minutes > t.oom_forecast_min) continue;
    add_rank(f, r);
    if (minutes < best_min)
      best_min = minutes, best_slope = slope / step_s, best_free = *total - used,
      from = "allocated_per_step";
    if (steps_left < 0 || left < steps_left) steps_left = left;
  }
  if (f.gpus.empty() && f.ranks.empty()) return;
  std::sort(f.gpus.begin(), f.gpus.end());
  f.id = "oom_forecast";
  f.severity = best_min <= t.oom_forecast_critical_min ? Severity::kCritical : Severity::kWarning;
  f.confidence = confidence_of(1, 1, t.oom_forecast_min, std::max(best_min, 1e-3));
  f.title = "Out of memory ahead";
  f.summary = "at the recent growth (" + fmt_bytes(best_slope) + "/s) memory is full in " +
              fmt(best_min, 1) + " min" +
              (steps_left >= 0 ? " (" + fmt(steps_left, 0) + " steps)" : "");
  f.add("minutes_to_full", best_min);
  if (steps_left >= 0) f.add("steps_to_full", steps_left);
  f.add("growth_bytes_per_s", best_slope);
  f.add("free_bytes", best_free);
  f.add("source", from);
  f.advice =
      "Find what grows (see memory_leak if reported; other processes on the GPU count "
      "too): free per-step tensors, lower the batch size, or enable activation checkpointing. "
      "mon.oom_guard(model) splits the batch into micro-batches before memory runs out, with "
      "the same effective batch (docs/oom-guard.md).";
  for (const auto& a : v.actions)
    if (a.action.action.starts_with("oom_")) {
      f.advice =
          "The OOM guard is on (oom_guard says what it did): it splits the batch before memory "
          "runs out, down to its floor. Find what grows all the same (see memory_leak if "
          "reported; other processes on the GPU count too): free per-step tensors, or enable "
          "activation checkpointing.";
      break;
    }
  name_memory_capture(v, f);
  out.push_back(std::move(f));
}

void check_oom(const RunView& v, const Thresholds&, std::vector<Finding>& out) {
  Finding f;
  for (const auto& e : v.run.rank_events) {
    if (e.kind != "oom") continue;
    const std::int64_t label = e.rank.value_or(e.pid);
    if (!std::count(f.ranks.begin(), f.ranks.end(), label)) f.ranks.push_back(label);
    widen_range(f, e.time_ms, e.time_ms);
    for (const auto& r : v.run.ranks)
      if (r.pid == e.pid && r.gpu && !std::count(f.gpus.begin(), f.gpus.end(), *r.gpu))
        f.gpus.push_back(*r.gpu);
  }
  // num_ooms that grew in the steps without an OOM event: OOMs the process caught and went on
  // after. Where the fragmentation finding names the rank they are its evidence (an allocation
  // that fails for want of a contiguous block, with memory free); otherwise they are an `oom`,
  // a warning (the run survived) where an uncaught one is critical.
  const Finding* frag = nullptr;
  for (const auto& o : out)
    if (o.id == "fragmentation") frag = &o;
  const bool uncaught = !f.ranks.empty();
  double caught = 0;
  for (const auto& r : v.ranks) {
    std::optional<std::int64_t> first, last;
    for (const auto* s : r.all)
      if (s->num_ooms) last = s->num_ooms, first = first.value_or(*s->num_ooms);
    if (!first || *last <= *first || std::count(f.ranks.begin(), f.ranks.end(), r.label)) continue;
    if (frag && std::count(frag->ranks.begin(), frag->ranks.end(), r.label)) continue;
    if (guard_split_after_oom(v, r.info->pid)) continue;  // oom_guard's: it caught them
    add_rank(f, r);
    caught += static_cast<double>(*last - *first);
  }
  if (f.ranks.empty()) return;
  f.id = "oom";
  f.severity = uncaught ? Severity::kCritical : Severity::kWarning;
  f.confidence = 1;
  f.title = "Out of memory";
  f.summary = std::to_string(f.ranks.size()) + " process(es) ran out of GPU memory" +
              (uncaught ? "" : " (" + fmt(caught, 0) + " OOMs caught, the run went on)");
  f.add("ranks_oom", static_cast<double>(f.ranks.size()));
  if (caught > 0) f.add("caught_ooms", caught);
  f.advice =
      "Lower the batch size or sequence length, enable activation checkpointing or mixed "
      "precision, set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, and check other "
      "processes on the GPU. mon.oom_guard(model) retries the step as smaller micro-batches "
      "on an OOM, with the same effective batch, and training goes on (docs/oom-guard.md).";
  out.push_back(std::move(f));
}

// Processes that are not training ranks holding memory on a training GPU. Only when NVML saw at
// least one rank's pid (else pids may be from another namespace and all would look foreign). A
// process of the ranks' own job (the node read its job) is the training's, not foreign: another
// node's rank sharing the GPU, a helper process the job started.
void check_foreign(const RunView& v, const Thresholds& t, std::vector<Finding>& out) {
  std::set<std::int64_t> pids;
  std::set<unsigned> gpus;
  std::set<std::string> jobs;
  for (const auto& r : v.run.ranks) {
    pids.insert(r.pid);
    if (r.gpu) gpus.insert(*r.gpu);
    if (r.hello && !r.hello->job.id.empty()) jobs.insert(r.hello->job.id);
  }
  bool seen = false;
  for (const auto& p : v.run.processes) seen |= pids.count(p.pid) > 0;
  if (!seen) return;
  for (const auto& p : v.run.processes)
    if (pids.count(p.pid)) gpus.insert(p.gpu);
  Finding f;
  double worst = 0;
  for (const auto& p : v.run.processes) {
    if (pids.count(p.pid) || !gpus.count(p.gpu) || !p.max_used_memory_bytes || jobs.count(p.job.id))
      continue;
    const double mem = static_cast<double>(*p.max_used_memory_bytes);
    if (mem < t.foreign_min_bytes) continue;
    if (!std::count(f.gpus.begin(), f.gpus.end(), p.gpu)) f.gpus.push_back(p.gpu);
    widen_range(f, p.first_seen_ms, p.last_seen_ms);
    f.add("pid" + std::to_string(p.pid) + "_bytes", mem);
    if (p.name) f.add("pid" + std::to_string(p.pid) + "_name", *p.name);
    if (!p.job.empty()) f.add("pid" + std::to_string(p.pid) + "_job", job::job_tag(p.job));
    worst = std::max(worst, mem);
  }
  if (f.gpus.empty()) return;
  f.id = "foreign_memory";
  f.severity = Severity::kWarning;
  f.confidence = confidence_of(1, 1, worst, t.foreign_min_bytes);
  f.title = "Other processes hold memory on a training GPU";
  f.summary =
      "processes outside the training hold up to " + fmt_bytes(worst) + " on training GPU(s)";
  f.evidence.insert(f.evidence.begin(), {"max_foreign_bytes", worst});
  f.advice =
      "Stop or move the other processes (notebooks, evaluation jobs, stale workers), or "
      "give each job its own GPUs (CUDA_VISIBLE_DEVICES).";
  out.push_back(std::move(f));
}

}  // namespace

void check_memory(const RunView& v, const Thresholds& t, std::vector<Finding>& out) {
  check_allocator(v, t, out);
  check_forecast(v, t, out);
  check_oom(v, t, out);
  check_foreign(v, t, out);
}

}  // namespace gpumon::diagnose
