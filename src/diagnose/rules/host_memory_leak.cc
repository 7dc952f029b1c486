// SPDX-License-Identifier: MIT
// host_memory_leak: a training process whose host memory (PSS, its DataLoader workers'
// included) keeps growing, with a forecast of when the host or its memory cgroup runs out.
#include <algorithm>
#include <cmath>
#include <map>

#include "diagnose/rules/rules.h"
#include "diagnose/stats.h"

namespace gpumon::diagnose {
namespace {

struct Leak {
  std::int64_t pid = 0;
  const RankInfo* info = nullptr;
  double slope_bytes_per_s = 0, growth_bytes = 0, span_s = 0;
  double first_bytes = 0, last_bytes = 0, workers_bytes = 0, workers = 0;
  bool pss_is_rss = false;
  std::int64_t t0 = 0, t1 = 0;
};

// When the warm-up of `pid` ended: its warmup_steps-th step's arrival; 0 without steps.
std::int64_t warm_from_ms(const RunView& v, std::int64_t pid, const Thresholds& t) {
  for (const auto& r : v.ranks)
    if (r.info && r.info->pid == pid && !r.all.empty()) {
      const std::size_t i =
          std::min(r.all.size() - 1, static_cast<std::size_t>(std::max(t.warmup_steps, 0)));
      return r.all[i]->received_ms;
    }
  return 0;
}

std::optional<Leak> leak_of(const RunView& v, std::int64_t pid,
                            const std::vector<const training::ProcessSample*>& samples,
                            const Thresholds& t) {
  const std::int64_t from = warm_from_ms(v, pid, t);
  std::vector<double> x, y;
  const training::ProcessSample* last = nullptr;
  // The workers are read at the newest sample that saw all of them: at the run's end the
  // DataLoader shuts its workers down one by one, and a sample then sees only some.
  const training::ProcessSample* all_workers = nullptr;
  bool rss = false;
  for (const auto* s : samples) {
    const auto pss = s->total_pss_bytes();
    if (!pss || s->time_ms < from) continue;
    x.push_back(static_cast<double>(s->time_ms) / 1000.0);
    y.push_back(static_cast<double>(*pss));
    last = s, rss = rss || s->pss_is_rss;
    if (!all_workers || s->workers >= all_workers->workers) all_workers = s;
  }
  // The samples after the newest one that saw every worker are the shutdown (workers gone,
  // the process freeing its data): the growth, the span and "last" end there.
  if (all_workers && last != all_workers && last->workers < all_workers->workers) {
    const double end_s = static_cast<double>(all_workers->time_ms) / 1000.0;
    while (!x.empty() && x.back() > end_s) x.pop_back(), y.pop_back();
    last = all_workers;
  }
  if (x.size() < 4 || x.back() - x.front() < t.host_leak_min_s) return std::nullopt;
  const double slope = theil_sen_slope(x, y).value_or(0);
  const double growth = slope * (x.back() - x.front());
  // A steady trend, not one jump (workers starting, a dataset cached once): the data's last
  // quarter is above its first by half the fitted growth, and the second half still grows at
  // half the slope or more.
  const std::size_t q = y.size() / 4;
  const double first_q = *median_of({y.begin(), y.begin() + static_cast<std::ptrdiff_t>(q + 1)});
  const double last_q = *median_of({y.end() - static_cast<std::ptrdiff_t>(q + 1), y.end()});
  const std::size_t h = y.size() / 2;
  const double late = theil_sen_slope({x.begin() + static_cast<std::ptrdiff_t>(h), x.end()},
                                      {y.begin() + static_cast<std::ptrdiff_t>(h), y.end()})
                          .value_or(0);
  if (growth < t.host_leak_min_growth_bytes ||
      growth < t.host_leak_min_growth_ratio * std::max(first_q, 1.0) ||
      last_q - first_q < 0.5 * growth || late < 0.5 * slope)
    return std::nullopt;
  Leak l;
  l.pid = pid;
  l.slope_bytes_per_s = slope, l.growth_bytes = growth, l.span_s = x.back() - x.front();
  l.first_bytes = y.front(), l.last_bytes = y.back();
  l.workers_bytes = static_cast<double>(all_workers->workers_pss_bytes.value_or(0));
  l.workers = all_workers->workers;
  l.pss_is_rss = rss;
  l.t0 = static_cast<std::int64_t>(x.front() * 1000), l.t1 = last->time_ms;
  for (const auto& r : v.run.ranks)
    if (r.pid == pid) l.info = &r;
  return l;
}

}  // namespace

void check_host_memory_leak(const RunView& v, const Thresholds& t, std::vector<Finding>& out) {
  std::map<std::int64_t, std::vector<const training::ProcessSample*>> by_pid;
  for (const auto& s : v.run.process_samples) by_pid[s.pid].push_back(&s);
  std::vector<Leak> leaks;
  for (auto& [pid, samples] : by_pid) {
    std::stable_sort(samples.begin(), samples.end(),
                     [](const auto* a, const auto* b) { return a->time_ms < b->time_ms; });
    if (auto l = leak_of(v, pid, samples, t)) leaks.push_back(*l);
  }
  if (leaks.empty()) return;
  const Leak& worst = *std::max_element(
      leaks.begin(), leaks.end(),
      [](const Leak& a, const Leak& b) { return a.slope_bytes_per_s < b.slope_bytes_per_s; });
  // The host's room at the newest sample: MemAvailable, or what the cgroup limit leaves if
  // less; every leaking process eats into the same room.
  const training::ProcessSample* newest = nullptr;
  for (const auto& s : v.run.process_samples)
    if (!newest || s.time_ms >= newest->time_ms) newest = &s;
  std::optional<double> room;
  std::string room_of;
  if (newest->mem_available_bytes)
    room = static_cast<double>(*newest->mem_available_bytes), room_of = "mem_available";
  if (newest->cgroup_limit_bytes && newest->cgroup_usage_bytes) {
    const double left =
        static_cast<double>(*newest->cgroup_limit_bytes - *newest->cgroup_usage_bytes);
    if (!room || left < *room) room = std::max(left, 0.0), room_of = "cgroup_limit";
  }
  double total_slope = 0;
  for (const auto& l : leaks) total_slope += l.slope_bytes_per_s;
  const std::optional<double> minutes =
      room ? std::optional<double>(*room / total_slope / 60.0) : std::nullopt;

  Finding f;
  f.id = "host_memory_leak";
  f.severity =
      minutes && *minutes <= t.host_leak_critical_min ? Severity::kCritical : Severity::kWarning;
  f.confidence = confidence_of(worst.span_s, 10 * t.host_leak_min_s, worst.growth_bytes,
                               t.host_leak_min_growth_bytes);
  f.title = "Host memory leak";
  for (const auto& l : leaks) {
    if (l.info && l.info->rank)
      f.ranks.push_back(*l.info->rank);
    else
      f.pids.push_back(l.pid);
    if (l.info && l.info->gpu && !std::count(f.gpus.begin(), f.gpus.end(), *l.info->gpu))
      f.gpus.push_back(*l.info->gpu);
    widen_range(f, l.t0, l.t1);
  }
  const std::string who_ = worst.info && worst.info->rank
                               ? "rank " + std::to_string(*worst.info->rank)
                               : "pid " + std::to_string(worst.pid);
  f.summary = who_ + "'s host memory (PSS with its " + fmt(worst.workers, 0) +
              " worker(s)) grows by " + fmt_bytes(worst.slope_bytes_per_s) + "/s (" +
              fmt_bytes(worst.first_bytes) + " -> " + fmt_bytes(worst.last_bytes) + " in " +
              fmt(worst.span_s, 0) + " s)";
  if (minutes)
    f.summary += "; the " + std::string(room_of == "cgroup_limit" ? "memory cgroup" : "host") +
                 " runs out in about " + fmt(*minutes, 1) + " min";
  f.add("growth_bytes_per_s", worst.slope_bytes_per_s);
  f.add("pss_growth_bytes", worst.growth_bytes);
  f.add("span_s", worst.span_s);
  f.add("first_pss_bytes", worst.first_bytes);
  f.add("last_pss_bytes", worst.last_bytes);
  f.add("workers_pss_bytes", worst.workers_bytes);
  f.add("workers", worst.workers);
  if (minutes) {
    f.add("minutes_to_full", *minutes);
    f.add("headroom_bytes", *room);
    f.add("limit", room_of);
  }
  if (worst.pss_is_rss) f.add("measure", std::string("rss"));  // no smaps_rollup: RSS
  f.advice =
      "Something in the process or its DataLoader workers keeps Python objects alive: a list "
      "or cache growing in the Dataset or the training loop, losses or outputs kept as tensors, "
      "or workers touching the dataset's Python objects (refcounts copy forked pages: keep "
      "the data in numpy arrays or tensors, not lists of objects). tracemalloc or memray in the "
      "process shows who allocates.";
  out.push_back(std::move(f));
}

}  // namespace gpumon::diagnose
