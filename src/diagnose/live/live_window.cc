// SPDX-License-Identifier: MIT
#include "diagnose/live/live_window.h"

#include <algorithm>
#include <set>

namespace gpumon::diagnose {
namespace {

template <typename T>
std::optional<double> num(const Reading<T>& r) {
  if (!r) return std::nullopt;
  return static_cast<double>(*r);
}

template <typename Deque, typename TimeOf>
void drop_before(Deque& d, std::int64_t cutoff, TimeOf time_of) {
  while (!d.empty() && time_of(d.front()) < cutoff) d.pop_front();
}

}  // namespace

GpuPoint live_point(const DeviceSample& s) {
  GpuPoint p;
  p.t_ms = record::to_unix_ms(s.wall_time);
  for (const MetricInfo& m : metric_catalog()) {
    if (const PointSetter set = point_setter(m.id))
      if (const auto v = metric_value(s, m.id)) set(p, *v);
  }
  return p;
}

GpuSeries& LiveWindow::series(unsigned gpu) {
  for (auto& g : statics_)
    if (g.gpu == gpu) return g;
  statics_.emplace_back().gpu = gpu;
  return statics_.back();
}

void LiveWindow::set_devices(const std::vector<DeviceStatic>& devices) {
  for (const auto& d : devices) {
    GpuSeries& g = series(d.index);
    if (d.name) g.name = *d.name;
    if (d.uuid) g.uuid = *d.uuid;
    if (d.pci_bus_id) g.pci_bus_id = *d.pci_bus_id;
    g.memory_total_bytes = num(d.memory_total_bytes);
    g.max_sm_clock_mhz = num(d.max_sm_clock_mhz);
  }
}

void LiveWindow::add_tick(const TickSample& tick) {
  for (const auto& s : tick.gpus) {
    auto& pts = points_by_gpu_[s.index];
    series(s.index);
    pts.push_back(live_point(s));
    ++points_;
    seen(pts.back().t_ms);
    const std::size_t share = std::max<std::size_t>(
        limits_.max_points / std::max<std::size_t>(points_by_gpu_.size(), 1), 1);
    while (pts.size() > share) pts.pop_front(), --points_;
  }
  // A GPU that stopped being sampled may hold more than its share now: trim the largest.
  while (points_ > limits_.max_points) {
    auto largest =
        std::max_element(points_by_gpu_.begin(), points_by_gpu_.end(),
                         [](auto& a, auto& b) { return a.second.size() < b.second.size(); });
    largest->second.pop_front(), --points_;
  }
}

void LiveWindow::add_event(const GpuEvent& event) {
  events_.push_back(record::recorded_event(event));
  series(event.gpu);
  seen(events_.back().time_ms);
  if (events_.size() > limits_.max_events) events_.pop_front();
}

void LiveWindow::add_processes(const ProcessSnapshot& snapshot) {
  const std::int64_t ms = record::to_unix_ms(snapshot.wall_time);
  seen(ms);
  for (const auto& p : snapshot.processes) {
    auto it = processes_.find({snapshot.gpu, p.pid});
    if (it == processes_.end()) {
      if (processes_.size() >= limits_.max_processes) continue;
      it = processes_.emplace(std::pair{snapshot.gpu, p.pid}, record::RecordedProcess{}).first;
      it->second.gpu = snapshot.gpu, it->second.pid = p.pid, it->second.first_seen_ms = ms;
    }
    record::RecordedProcess& row = it->second;
    std::optional<std::int64_t> mem;
    if (p.used_memory_bytes) mem = static_cast<std::int64_t>(*p.used_memory_bytes);
    if (mem && (!row.max_used_memory_bytes || *mem > *row.max_used_memory_bytes))
      row.max_used_memory_bytes = mem;
    if (p.name) row.name = *p.name;
    row.last_used_memory_bytes = mem;
    row.last_seen_ms = ms;
  }
  // A process gone from its GPU's list keeps its stretch until it leaves the window.
}

void LiveWindow::add_step(const training::Step& step) {
  steps_.push_back(step);
  seen(step.received_ms);
  if (steps_.size() > limits_.max_steps) steps_.pop_front();
}

void LiveWindow::add_rank_event(const training::RankEvent& event) {
  seen(event.time_ms);
  if (event.kind == "hello") {
    if (hellos_.size() < limits_.max_ranks || hellos_.count(event.pid)) hellos_[event.pid] = event;
    return;
  }
  if (event.kind == "device") {  // the hello kept, with the device resolved later
    if (auto it = hellos_.find(event.pid); it != hellos_.end())
      it->second.hello = event.hello, it->second.detail = event.detail;
    return;
  }
  rank_events_.push_back(event);
  if (rank_events_.size() > limits_.max_rank_events) rank_events_.pop_front();
}

void LiveWindow::add_process_sample(const training::ProcessSample& sample) {
  process_samples_.push_back(sample);
  seen(sample.time_ms);
  if (process_samples_.size() > limits_.max_process_samples) process_samples_.pop_front();
}

void LiveWindow::prune() {
  const std::int64_t cutoff = newest_ms_ - limits_.span.count();
  for (auto& [gpu, pts] : points_by_gpu_) {
    const std::size_t before = pts.size();
    drop_before(pts, cutoff, [](const GpuPoint& p) { return p.t_ms; });
    points_ -= before - pts.size();
  }
  drop_before(events_, cutoff, [](const record::RecordedEvent& e) { return e.time_ms; });
  drop_before(process_samples_, cutoff, [](const training::ProcessSample& s) { return s.time_ms; });
  // Steps that age out are kept, the last kept_steps of each process that said hello, until it
  // leaves (below).
  while (!steps_.empty() && steps_.front().received_ms < cutoff) {
    const training::Step& s = steps_.front();
    if (hellos_.count(s.pid) && limits_.kept_steps > 0) {
      auto& kept = kept_[s.pid];
      kept.push_back(s);
      if (kept.size() > limits_.kept_steps) kept.pop_front();
    }
    steps_.pop_front();
  }
  for (auto it = processes_.begin(); it != processes_.end();)
    it = it->second.last_seen_ms < cutoff ? processes_.erase(it) : std::next(it);
  // A process's hello goes once it has left (bye / disconnect / dropped) and that left the
  // window; until then it stays, however old, so its rank keeps its GPU.
  std::set<std::int64_t> left;
  for (const auto& e : rank_events_) left.insert(e.pid);
  while (!rank_events_.empty() && rank_events_.front().time_ms < cutoff) {
    const auto& e = rank_events_.front();
    if (e.left()) {
      bool later = false;  // a later event of the same pid keeps it alive
      for (std::size_t i = 1; i < rank_events_.size() && !later; ++i)
        later = rank_events_[i].pid == e.pid;
      if (!later) hellos_.erase(e.pid), kept_.erase(e.pid);
    }
    rank_events_.pop_front();
  }
}

RunData LiveWindow::run_data() const {
  RunData run;
  run.source = "live";
  run.gpus.reserve(statics_.size());
  for (const auto& s : statics_) {
    GpuSeries& g = run.gpus.emplace_back(s);
    if (auto it = points_by_gpu_.find(s.gpu); it != points_by_gpu_.end())
      g.points.assign(it->second.begin(), it->second.end());
  }
  std::sort(run.gpus.begin(), run.gpus.end(),
            [](const GpuSeries& a, const GpuSeries& b) { return a.gpu < b.gpu; });
  run.events.assign(events_.begin(), events_.end());
  for (const auto& [key, p] : processes_) run.processes.push_back(p);
  std::sort(run.processes.begin(), run.processes.end(),
            [](const auto& a, const auto& b) { return a.first_seen_ms < b.first_seen_ms; });
  for (const auto& [pid, kept] : kept_) run.steps.insert(run.steps.end(), kept.begin(), kept.end());
  run.steps.insert(run.steps.end(), steps_.begin(), steps_.end());
  std::stable_sort(run.steps.begin(), run.steps.end(),
                   [](const auto& a, const auto& b) { return a.received_ms < b.received_ms; });
  for (const auto& [pid, h] : hellos_) run.rank_events.push_back(h);
  run.rank_events.insert(run.rank_events.end(), rank_events_.begin(), rank_events_.end());
  std::stable_sort(run.rank_events.begin(), run.rank_events.end(),
                   [](const auto& a, const auto& b) { return a.time_ms < b.time_ms; });
  run.process_samples.assign(process_samples_.begin(), process_samples_.end());
  finish_run_data(run);
  return run;
}

}  // namespace gpumon::diagnose
