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
      const auto newest_of = [](const Series& x) {  // empty only after a failed allocation
        return x.count() > 0 ? x.newest().t_end_s : -std::numeric_limits<double>::infinity();
      };
      for (auto j = series_.begin(); j != series_.end(); ++j)
        if (newest_of(j->second) < newest_of(oldest->second)) oldest = j;
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
  if (!(seconds > 0)) return out;
  struct Copy {
    std::int64_t pid;
    std::optional<std::int64_t> rank;
    std::vector<Row> rows;  // in the window, oldest first
  };
  std::vector<Copy> copies;
  double newest = 0;
  {
    std::lock_guard lock(mutex_);
    if (series_.empty()) return out;
    newest = -std::numeric_limits<double>::infinity();
    for (const auto& [pid, s] : series_)
      if (s.count() > 0) newest = std::max(newest, s.newest().t_end_s);
    const double from = std::floor(newest) - std::max(1.0, std::floor(std::min(seconds, 1e9))) + 1;
    for (const auto& [pid, s] : series_) {
      std::size_t first = s.count();
      while (first > 0 && std::floor(s.at(first - 1).t_end_s) >= from) --first;
      if (first == s.count()) continue;
      Copy c{pid, s.rank, {}};
      c.rows.reserve(s.count() - first);
      for (std::size_t i = first; i < s.count(); ++i) c.rows.push_back(s.at(i));
      copies.push_back(std::move(c));
    }
  }
  if (copies.empty()) return out;
  // One grid of whole seconds from the oldest row in the window, for every process.
  double oldest = std::floor(newest);
  for (const Copy& c : copies) oldest = std::min(oldest, std::floor(c.rows.front().t_end_s));
  const auto span = static_cast<std::size_t>(std::floor(newest) - oldest) + 1;
  const std::size_t samples = max_points > 0 ? std::min(span, max_points) : span;
  const std::size_t pairs = std::max<std::size_t>(1, samples / 2);
  out.stride = samples >= span ? 1 : (span + pairs - 1) / pairs;
  const double stride = static_cast<double>(out.stride);
  const auto value = [](std::size_t metric, const Row& r) -> float {
    switch (metric) {
      case 0: return r.steps > 0 ? r.step_s / static_cast<float>(r.steps) : kNone;
      case 1:
        return r.waited_step_s > 0 ? std::clamp(r.wait_s / r.waited_step_s, 0.0F, 1.0F) : kNone;
      case 2: return r.allocated;
      default: return r.reserved;
    }
  };
  for (const Copy& copy : copies) {
    HistoryRankColumns c;
    c.pid = copy.pid;
    c.rank = copy.rank;
    c.values.resize(out.metrics.size());
    const std::vector<Row>& rows = copy.rows;
    for (std::size_t first = 0; first < rows.size();) {
      const double second = std::floor(rows[first].t_end_s);
      if (out.stride == 1) {
        c.time.push_back(second);
        for (std::size_t m = 0; m < c.values.size(); ++m)
          c.values[m].push_back(value(m, rows[first]));
        ++first;
        continue;
      }
      // The run of the grid this row is in, and the rows of it.
      const double start = oldest + std::floor((second - oldest) / stride) * stride;
      std::size_t end = first + 1;
      while (end < rows.size() && std::floor(rows[end].t_end_s) < start + stride) ++end;
      c.time.push_back(start);
      c.time.push_back(start + stride - 1);
      for (std::size_t m = 0; m < c.values.size(); ++m) {
        const auto two =
            run_extremes(end - first, [&](std::size_t i) { return value(m, rows[first + i]); });
        c.values[m].insert(c.values[m].end(), two.begin(), two.end());
      }
      first = end;
    }
    out.ranks.push_back(std::move(c));
  }
  std::stable_sort(out.ranks.begin(), out.ranks.end(), [](const auto& a, const auto& b) {
    return std::pair(a.rank.value_or(-1), a.pid) < std::pair(b.rank.value_or(-1), b.pid);
  });
  return out;
}

}  // namespace gpumon::exporter
