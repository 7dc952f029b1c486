// SPDX-License-Identifier: MIT
#include "exporter/training_history.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace gpumon::exporter {
namespace {

constexpr float kNone = std::numeric_limits<float>::quiet_NaN();

float bytes(const std::optional<std::int64_t>& v) {
  return v ? static_cast<float>(*v) : kNone;
}

}  // namespace

const std::vector<std::string>& TrainingHistory::metrics() {
  static const std::vector<std::string> names = {"step_seconds", "data_wait_share",
                                                 "allocated_bytes", "reserved_bytes"};
  return names;
}

void TrainingHistory::add(const training::Step& s) {
  if (!std::isfinite(s.t_end_s) || !std::isfinite(s.cpu_step_s)) return;
  std::lock_guard lock(mutex_);
  auto it = series_.find(s.pid);
  if (it == series_.end()) {
    if (series_.size() >= kMaxRanks) {
      // Room for the newcomer: the process whose newest step is oldest goes.
      auto oldest = series_.begin();
      for (auto j = series_.begin(); j != series_.end(); ++j)
        if (j->second.newest().t_end_s < oldest->second.newest().t_end_s) oldest = j;
      series_.erase(oldest);
    }
    it = series_.emplace(s.pid, Series{}).first;
  }
  Series& series = it->second;
  if (s.rank) series.rank = s.rank;
  if (series.count() == 0 || std::floor(s.t_end_s) > std::floor(series.newest().t_end_s)) {
    Row fresh;
    fresh.allocated = fresh.reserved = kNone;
    if (series.rows.size() < kRows) {
      series.rows.push_back(fresh);
    } else {
      series.rows[series.next] = fresh;
      series.next = (series.next + 1) % kRows;
    }
  }
  Row& row = series.newest();
  row.t_end_s = std::max(row.t_end_s, s.t_end_s);
  row.step_s += static_cast<float>(s.cpu_step_s);
  training::WaitTally wait;
  wait.add(s);
  row.wait_s += static_cast<float>(wait.wait_s);
  row.waited_step_s += static_cast<float>(wait.step_s);
  if (s.allocated_bytes) row.allocated = bytes(s.allocated_bytes);
  if (s.reserved_bytes) row.reserved = bytes(s.reserved_bytes);
  ++row.steps;
}

void TrainingHistory::forget(std::int64_t pid) {
  std::lock_guard lock(mutex_);
  series_.erase(pid);
}

TrainingHistoryColumns TrainingHistory::columns(double seconds, std::size_t max_points) const {
  TrainingHistoryColumns out;
  out.interval_s = 1;
  out.metrics = metrics();
  std::lock_guard lock(mutex_);
  if (!(seconds > 0) || series_.empty()) return out;
  double newest = -std::numeric_limits<double>::infinity();
  for (const auto& [pid, s] : series_) newest = std::max(newest, s.newest().t_end_s);
  const double from = newest - std::min(seconds, 1e9);
  // Each process's rows in the window (the newest ones, oldest first), and one stride for all:
  // the most rows any of them has.
  std::vector<std::pair<const Series*, std::size_t>> in_window;  // the series, its first row
  std::size_t most = 0;
  for (const auto& [pid, s] : series_) {
    std::size_t first = s.count();
    while (first > 0 && s.at(first - 1).t_end_s > from) --first;
    if (first == s.count()) continue;
    in_window.emplace_back(&s, first);
    most = std::max(most, s.count() - first);
  }
  const std::size_t samples = max_points > 0 ? std::min(most, max_points) : most;
  const std::size_t pairs = std::max<std::size_t>(1, samples / 2);
  out.stride = samples >= most ? 1 : (most + pairs - 1) / pairs;
  std::size_t k = 0;
  for (const auto& [pid, s] : series_) {
    if (k == in_window.size() || in_window[k].first != &s) continue;
    const std::size_t first = in_window[k++].second;
    HistoryRankColumns c;
    c.pid = pid;
    c.rank = s.rank;
    c.values.resize(out.metrics.size());
    const auto value = [&](std::size_t metric, const Row& r) -> float {
      switch (metric) {
        case 0: return r.steps > 0 ? r.step_s / static_cast<float>(r.steps) : kNone;
        case 1:
          return r.waited_step_s > 0 ? std::clamp(r.wait_s / r.waited_step_s, 0.0F, 1.0F) : kNone;
        case 2: return r.allocated;
        default: return r.reserved;
      }
    };
    for (std::size_t run = first; run < s.count(); run += out.stride) {
      const std::size_t n = std::min(s.count() - run, out.stride);
      if (n == 1) {
        c.time.push_back(s.at(run).t_end_s);
        for (std::size_t m = 0; m < c.values.size(); ++m)
          c.values[m].push_back(value(m, s.at(run)));
        continue;
      }
      c.time.push_back(s.at(run).t_end_s);
      c.time.push_back(s.at(run + n - 1).t_end_s);
      for (std::size_t m = 0; m < c.values.size(); ++m) {
        const auto two = run_extremes(n, [&](std::size_t i) { return value(m, s.at(run + i)); });
        c.values[m].insert(c.values[m].end(), two.begin(), two.end());
      }
    }
    out.ranks.push_back(std::move(c));
  }
  std::stable_sort(out.ranks.begin(), out.ranks.end(), [](const auto& a, const auto& b) {
    return std::pair(a.rank.value_or(-1), a.pid) < std::pair(b.rank.value_or(-1), b.pid);
  });
  return out;
}

}  // namespace gpumon::exporter
