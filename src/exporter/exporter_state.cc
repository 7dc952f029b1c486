// SPDX-License-Identifier: MIT
#include "exporter/exporter_state.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "exporter/history_columns.h"
#include "exporter/renderers.h"

namespace gpumon::exporter {
namespace {

constexpr std::size_t kMaxRejectReasons = 64;  // the HTTP layer's reasons are a fixed set

std::shared_ptr<Clock> or_steady(std::shared_ptr<Clock> clock) {
  return clock ? std::move(clock) : std::make_shared<SteadyClock>();
}

double seconds(MonoClock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

ExporterState::ExporterState(const Sampler& sampler, ExporterOptions options,
                             std::shared_ptr<Clock> clock)
    : sampler_(sampler),
      options_(std::move(options)),
      clock_(or_steady(std::move(clock))),
      created_(clock_->now()),
      hold_(hold_time(sampler.config().interval)),
      health_limit_(3 * sampler.config().interval + std::chrono::seconds(5)),
      process_stale_(std::max<MonoClock::duration>(hold_, 3 * sampler.config().process_period)),
      charts_(sampler.config().interval, kChartSpan) {}

GpuState& ExporterState::gpu_locked(unsigned index) {
  if (index >= gpus_.size()) gpus_.resize(index + 1);
  return gpus_[index];
}

void ExporterState::expire_locked(MonoClock::time_point now) {
  for (GpuState& g : gpus_) {
    g.known.expire(now, hold_);
    // The rate lives as long as the counter it comes from is held (a stretched slow task).
    if (g.nvlink_prev_kib &&
        now - g.nvlink_prev_time > g.known.held_for(MetricId::kNvlinkDataTxKib, hold_))
      g.nvlink_mb_per_s.reset(), g.nvlink_prev_kib.reset();
    // Held as LastKnown holds a reading: the hold, or 1.5 of the period the lists came at.
    if (g.has_processes && now - g.processes_time > held_for_gap(process_stale_, g.processes_gap)) {
      g.has_processes = false;
      g.processes.clear();
    }
  }
}

void ExporterState::note_nvlink(GpuState& g, const DeviceSample& s, MonoClock::time_point now) {
  const auto tx = metric_value(s, MetricId::kNvlinkDataTxKib);
  const auto rx = metric_value(s, MetricId::kNvlinkDataRxKib);
  if (!tx || !rx || s.lost || s.stale) return;  // not read this tick
  const double kib = *tx + *rx;
  const double dt = seconds(now - g.nvlink_prev_time);
  // A counter that went back (driver reload) starts over.
  if (g.nvlink_prev_kib && dt > 0 && kib >= *g.nvlink_prev_kib)
    g.nvlink_mb_per_s = (kib - *g.nvlink_prev_kib) / dt / 1000.0;
  g.nvlink_prev_kib = kib;
  g.nvlink_prev_time = now;
}

void ExporterState::on_tick(const TickSample& tick) {
  charts_.add(tick);
  std::lock_guard lock(mutex_);
  ++generation_;
  have_tick_ = true;
  last_tick_mono_ = tick.mono_time;
  last_tick_wall_ = tick.wall_time;
  for (const DeviceSample& s : tick.gpus) {
    if (s.index >= kMaxGpuIndex) continue;
    GpuState& g = gpu_locked(s.index);
    g.seen = true;
    g.lost = s.lost;
    g.stale_call.reset();
    if (s.stale) {
      g.stale_call = s.stale->call;
      g.stale_for_s = std::max(0.0, seconds(tick.mono_time - s.stale->since));
    }
    g.known.update(s, tick.mono_time, hold_);
    if (s.lost) {
      g.has_processes = g.processes_seen = false;
      g.processes.clear();
    }
    note_nvlink(g, s, tick.mono_time);
  }
  expire_locked(tick.mono_time);
}

void ExporterState::on_event(const GpuEvent& event) {
  std::lock_guard lock(mutex_);
  if (event.gpu >= kMaxGpuIndex) return;
  ++generation_;
  GpuState& g = gpu_locked(event.gpu);
  switch (event.kind) {
    case GpuEvent::Kind::kXid:
      ++g.xid_counts[event.value];
      g.last_xid = event.value;
      g.last_xid_time = event.wall_time;
      break;
    case GpuEvent::Kind::kEccSingleBit: ++g.ecc_single_bit_events; break;
    case GpuEvent::Kind::kEccDoubleBit: ++g.ecc_double_bit_events; break;
    case GpuEvent::Kind::kLost:
    case GpuEvent::Kind::kRecovered: break;  // the ticks carry the lost flag
  }
}

void ExporterState::on_processes(const ProcessSnapshot& snapshot) {
  std::lock_guard lock(mutex_);
  if (snapshot.gpu >= kMaxGpuIndex) return;
  ++generation_;
  GpuState& g = gpu_locked(snapshot.gpu);
  const MonoClock::time_point at = have_tick_ ? last_tick_mono_ : created_;
  // A gap longer than LastKnown's outage bound is not a period.
  if (g.processes_seen)
    g.processes_gap = at - g.processes_time <= LastKnown::kMaxGap ? at - g.processes_time
                                                                  : MonoClock::duration::zero();
  g.has_processes = g.processes_seen = true;
  g.processes_time = at;
  g.processes = snapshot.processes;
}

void ExporterState::count_request(int code) {
  std::lock_guard lock(mutex_);
  ++http_.requests[code];
}

void ExporterState::count_rejected(const std::string& reason) {
  std::lock_guard lock(mutex_);
  if (http_.rejected.size() >= kMaxRejectReasons && http_.rejected.count(reason) == 0) {
    ++http_.rejected["other"];
  } else {
    ++http_.rejected[reason];
  }
}

double ExporterState::tick_age_s_locked(MonoClock::time_point now) const {
  return seconds(now - (have_tick_ ? last_tick_mono_ : created_));
}

Health ExporterState::health() const {
  const MonoClock::time_point now = clock_->now();
  std::lock_guard lock(mutex_);
  const MonoClock::duration age = now - (have_tick_ ? last_tick_mono_ : created_);
  if (age <= health_limit_) return {true, "ok"};
  if (!have_tick_) {
    return {false, fmt::format("no sample in the {:.1f} s since start (limit {:.1f} s)",
                               seconds(age), seconds(health_limit_))};
  }
  return {false, fmt::format("last sample {:.1f} s ago (limit {:.1f} s)", seconds(age),
                             seconds(health_limit_))};
}

ExporterView ExporterState::make_view() {
  ExporterView v;
  // Sampler calls first, without mutex_: the sampler thread holds its own lock around sinks.
  v.system = sampler_.system();
  v.devices = sampler_.devices();
  v.stats = sampler_.stats();
  v.config = sampler_.config();
  v.history_capacity = sampler_.history().capacity();
  const MonoClock::time_point now = clock_->now();
  v.now_wall = clock_->wall_now();
  std::unique_lock lock(mutex_);
  v.gpus = gpus_;
  v.have_tick = have_tick_;
  v.last_tick_wall = last_tick_wall_;
  v.last_tick_age_s = tick_age_s_locked(now);
  v.up = now - (have_tick_ ? last_tick_mono_ : created_) <= health_limit_ && have_tick_;
  v.http = http_;
  lock.unlock();
  if (options_.training) {  // its own lock, never nested in mutex_
    v.training_enabled = true;
    v.training = options_.training->snapshot(v.devices);
  }
  if (options_.http_counts) {
    HttpCounts more = options_.http_counts();
    for (const auto& [code, n] : more.requests) v.http.requests[code] += n;
    for (const auto& [reason, n] : more.rejected) v.http.rejected[reason] += n;
  }
  return v;
}

std::shared_ptr<const std::string> ExporterState::metrics_text() {
  auto training_generation = [this] {
    return options_.training ? options_.training->generation() : 0;
  };
  auto fresh = [&](MonoClock::time_point now) {
    return body_ && body_generation_ == generation_ &&
           body_training_generation_ == training_generation() && now - body_time_ < kMaxBodyAge;
  };
  {
    const MonoClock::time_point now = clock_->now();
    std::lock_guard lock(mutex_);
    if (fresh(now)) return body_;
  }
  std::lock_guard render_lock(render_mutex_);
  std::uint64_t generation = 0;
  std::uint64_t training_gen = 0;
  {
    const MonoClock::time_point now = clock_->now();
    std::lock_guard lock(mutex_);
    if (fresh(now)) return body_;  // rendered while this scrape waited
    generation = generation_;
    training_gen = training_generation();
  }
  const MonoClock::time_point rendered_at = clock_->now();
  auto body = std::make_shared<const std::string>(render_metrics(make_view(), options_));
  std::lock_guard lock(mutex_);
  body_ = body;
  body_generation_ = generation;
  body_training_generation_ = training_gen;
  body_time_ = rendered_at;
  return body;
}

std::string ExporterState::current_json() {
  return render_current_json(make_view(), options_);
}

std::string ExporterState::training_json() {
  return render_training_json(make_view());
}

std::string ExporterState::training_history_json(double seconds, std::size_t max_points) {
  if (!options_.training)
    return write_history_json(TrainingHistoryColumns{1, 1, TrainingHistory::metrics(), {}});
  return write_history_json(options_.training->history().columns(seconds, max_points));
}

std::string ExporterState::devices_json() {
  return render_devices_json(make_view(), options_);
}

std::string ExporterState::history_json(double seconds_back,
                                        const std::vector<std::string>& metrics,
                                        std::size_t max_points) {
  std::vector<MetricId> ids;
  bool throttled = metrics.empty();
  if (metrics.empty()) {
    for (const MetricInfo& m : metric_catalog()) ids.push_back(m.id);
  }
  for (const std::string& name : metrics) {
    if (name == kThrottledColumn) {
      throttled = true;
      continue;
    }
    const auto id = metric_by_name(name);
    if (!id) throw std::invalid_argument("unknown metric: " + name);
    if (std::find(ids.begin(), ids.end(), *id) == ids.end()) ids.push_back(*id);
  }
  if (!(seconds_back > 0)) seconds_back = 0;  // NaN too
  const std::vector<DeviceStatic> devices =
      throttled ? sampler_.devices() : std::vector<DeviceStatic>{};
  if (!metrics.empty() && std::all_of(ids.begin(), ids.end(), ChartHistory::holds))
    return write_history_json(
        charts_.columns(seconds_back, ids, throttled, devices, kMaxHistoryValues, max_points));
  const auto& history = sampler_.history();
  const auto newest = history.latest(1);
  std::vector<TickSample> ticks;
  if (!newest.empty() && seconds_back > 0) {
    const MonoClock::time_point to = newest.back().mono_time + MonoClock::duration(1);
    const double capped = std::min(seconds_back, 1e9);  // no overflow of the duration
    const auto span =
        std::chrono::duration_cast<MonoClock::duration>(std::chrono::duration<double>(capped));
    ticks = history.slice(to - span, to);
  }
  std::size_t values = 0;
  for (const TickSample& t : ticks)
    values += t.gpus.size() * (ids.size() + 1 + (throttled ? 1 : 0));
  const double interval_s = seconds(sampler_.config().interval);
  const std::size_t stride =
      std::max(history_stride(values, kMaxHistoryValues), history_stride(ticks.size(), max_points));
  return render_history_json(ticks, interval_s, ids, stride, throttled ? &devices : nullptr);
}

}  // namespace gpumon::exporter
