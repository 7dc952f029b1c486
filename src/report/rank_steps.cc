// SPDX-License-Identifier: MIT
#include "report/rank_steps.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace gpumon::report {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool finite(const training::Step& s) {
  return std::isfinite(s.t_start_s) && std::isfinite(s.t_end_s) && std::isfinite(s.cpu_step_s) &&
         (!s.data_wait_s || std::isfinite(*s.data_wait_s));
}

// The step axis of one rank: `steps` in time order.
std::vector<double> step_axis(const std::vector<const training::Step*>& steps,
                              const TimeGrid& grid) {
  std::vector<double> at(grid.count, kNaN);
  std::size_t k = 0;
  double last = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < grid.count; ++i) {
    const double mid_s = static_cast<double>(grid.center_ms(i)) / 1000;
    // The last step that started at or before the middle.
    while (k + 1 < steps.size() && steps[k + 1]->t_start_s <= mid_s) ++k;
    if (steps.empty() || steps[k]->t_start_s > mid_s || steps[k]->t_end_s < mid_s) continue;
    const double span = steps[k]->t_end_s - steps[k]->t_start_s;
    const double x =
        static_cast<double>(steps[k]->step) + (span > 0 ? (mid_s - steps[k]->t_start_s) / span : 0);
    if (x <= last) continue;
    at[i] = last = x;
  }
  return at;
}

}  // namespace

std::string RankSteps::label() const {
  std::string s = rank ? "rank " + std::to_string(*rank) + " (pid " : "pid ";
  s += std::to_string(pid);
  if (device) s += rank ? ", " + *device : " (" + *device;
  if (rank || device) s += ")";
  return s;
}

std::vector<RankSteps> rank_steps(const std::vector<training::Step>& steps,
                                  const std::vector<training::RankEvent>& hellos,
                                  const std::vector<record::RecordedDevice>& devices,
                                  const std::vector<record::RecordedProcess>& processes,
                                  const TimeGrid& grid) {
  std::map<std::int64_t, const training::Hello*> hello_of;
  for (const auto& e : hellos)
    if (e.carries_hello()) hello_of[e.pid] = e.hello ? &*e.hello : nullptr;
  std::vector<training::GpuIdentity> gpus;
  for (const auto& d : devices) gpus.push_back({d.index, d.uuid, d.pci_bus_id});

  std::map<std::pair<std::int64_t, std::string>, std::vector<const training::Step*>> groups;
  for (const auto& s : steps)
    if (finite(s)) groups[{s.pid, s.device.value_or("")}].push_back(&s);

  std::vector<RankSteps> out;
  const std::int64_t grid_end = grid.start_ms + grid.width_ms * std::int64_t(grid.count);
  for (auto& [key, list] : groups) {
    std::stable_sort(list.begin(), list.end(),
                     [](const auto* a, const auto* b) { return a->t_start_s < b->t_start_s; });
    RankSteps r;
    r.pid = key.first;
    r.rank = list.front()->rank;
    r.device = list.front()->device;
    const auto hello = hello_of.find(r.pid);
    r.gpu = training::map_rank_device(
        r.device ? std::optional<std::string_view>(*r.device) : std::nullopt,
        hello == hello_of.end() ? nullptr : hello->second, gpus,
        record::gpu_of_pid(processes, r.pid));
    r.first_step = list.front()->step;
    for (auto* series : {&r.step_time_s, &r.data_wait_s_series, &r.allocated_gib, &r.reserved_gib})
      *series = BucketSeries(grid.count);
    for (const auto* s : list) {
      ++r.steps;
      r.cpu_step_s += s->cpu_step_s;
      r.wait.add(*s);
      r.first_step = std::min(r.first_step, s->step);
      r.last_step = std::max(r.last_step, s->step);
      const auto end_ms = static_cast<std::int64_t>(std::llround(s->t_end_s * 1000));
      if (grid.count == 0 || end_ms < grid.start_ms || end_ms >= grid_end) continue;
      const std::size_t b = grid.bucket(end_ms);
      r.step_time_s.add(b, s->cpu_step_s);
      if (s->data_wait_s) r.data_wait_s_series.add(b, *s->data_wait_s);
      if (s->allocated_bytes)
        r.allocated_gib.add(b, static_cast<double>(*s->allocated_bytes) / kGiB);
      if (s->reserved_bytes) r.reserved_gib.add(b, static_cast<double>(*s->reserved_bytes) / kGiB);
    }
    r.step_at = step_axis(list, grid);
    out.push_back(std::move(r));
  }
  std::stable_sort(out.begin(), out.end(), [](const RankSteps& a, const RankSteps& b) {
    const auto ra = a.rank.value_or(std::numeric_limits<std::int64_t>::max());
    const auto rb = b.rank.value_or(std::numeric_limits<std::int64_t>::max());
    return ra != rb ? ra < rb : a.pid < b.pid;
  });
  return out;
}

std::optional<AxisRank> axis_rank(const std::vector<RankSteps>& ranks,
                                  std::optional<unsigned> gpu) {
  std::optional<AxisRank> best;
  auto more = [&](std::size_t i) { return !best || ranks[i].steps > ranks[best->index].steps; };
  for (std::size_t i = 0; i < ranks.size(); ++i)
    if (gpu && ranks[i].gpu.gpu == gpu && more(i)) best = AxisRank{i, true};
  if (best) return best;
  for (std::size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i].rank == 0 && more(i)) best = AxisRank{i, false};
  if (best) return best;
  for (std::size_t i = 0; i < ranks.size(); ++i)
    if (more(i)) best = AxisRank{i, false};
  return best;
}

std::string ActionEvent::label() const {
  const auto& a = action;
  if (a.micro_batch_size) return a.action + ": micro-batch " + std::to_string(*a.micro_batch_size);
  if (a.num_workers) return a.action + ": " + std::to_string(*a.num_workers) + " workers";
  if (a.prefetch_depth) return a.action + ": depth " + std::to_string(*a.prefetch_depth);
  return a.action;
}

std::vector<ActionEvent> action_events(const std::vector<training::RankEvent>& events) {
  std::vector<ActionEvent> out;
  for (const auto& e : events)
    if (auto a = training::action_of(e)) out.push_back({e.time_ms, e.pid, e.rank, std::move(*a)});
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.time_ms < b.time_ms; });
  return out;
}

namespace {

using Field = std::optional<std::int64_t> training::Action::*;

// The step function of one field over the grid; empty when no action of `pid` set it.
std::vector<double> state_series(const RankSteps& r, const std::vector<ActionEvent>& actions,
                                 Field field, Field previous, const TimeGrid& grid) {
  std::vector<const ActionEvent*> mine;
  for (const auto& a : actions)
    if (a.pid == r.pid && a.action.*field) mine.push_back(&a);
  if (mine.empty() || grid.count == 0) return {};
  std::vector<double> out(grid.count, kNaN);
  // Before the first action: the value it replaced, from the rank's first step on.
  if (const auto before = mine.front()->action.*previous) {
    std::size_t from = grid.count;
    for (std::size_t i = 0; i < grid.count; ++i)
      if (!std::isnan(r.step_at[i])) {
        from = i;
        break;
      }
    for (std::size_t i = from; i < grid.bucket(mine.front()->time_ms); ++i)
      out[i] = static_cast<double>(*before);
  }
  for (std::size_t k = 0; k < mine.size(); ++k) {
    const std::size_t end = k + 1 < mine.size() ? grid.bucket(mine[k + 1]->time_ms) : grid.count;
    for (std::size_t i = grid.bucket(mine[k]->time_ms); i < end; ++i)
      out[i] = static_cast<double>(*(mine[k]->action.*field));
  }
  return out;
}

}  // namespace

void add_actions(std::vector<RankSteps>& ranks, const std::vector<ActionEvent>& actions,
                 const TimeGrid& grid) {
  for (auto& r : ranks) {
    r.micro_batch_size = state_series(r, actions, &training::Action::micro_batch_size,
                                      &training::Action::previous_micro_batch_size, grid);
    r.loader_workers = state_series(r, actions, &training::Action::num_workers,
                                    &training::Action::previous_num_workers, grid);
  }
}

}  // namespace gpumon::report
