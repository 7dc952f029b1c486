// SPDX-License-Identifier: MIT
#include "diagnose/run_data.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "diagnose/throttle.h"
#include "training/rank_device.h"

namespace gpumon::diagnose {
namespace {

void map_rank(const RunData& run, RankInfo& r) {
  std::vector<training::GpuIdentity> gpus;
  for (const auto& g : run.gpus) gpus.push_back({g.gpu, g.uuid, g.pci_bus_id});
  const training::RankDevice m = training::map_rank_device(
      r.device, r.hello ? &*r.hello : nullptr, gpus, record::gpu_of_pid(run.processes, r.pid));
  r.gpu = m.gpu;
  r.gpu_mapped_by = training::device_rule_name(m.rule);
}

void widen(std::optional<std::int64_t>& lo, std::optional<std::int64_t>& hi, std::int64_t t) {
  lo = std::min(lo.value_or(t), t);
  hi = std::max(hi.value_or(t), t);
}

template <typename T>
void keep_min(std::optional<T>& a, std::optional<T> v) {
  if (v) a = std::min(a.value_or(*v), *v);
}
template <typename T>
void keep_max(std::optional<T>& a, std::optional<T> v) {
  if (v) a = std::max(a.value_or(*v), *v);
}

}  // namespace

void PointMerger::add(Field f, std::optional<double> v, std::int32_t n) {
  if (v) sum_[f] += *v * n, n_[f] += n;
}

void PointMerger::add(const GpuPoint& s, const std::optional<double>& max_sm_clock_mhz) {
  if (!open_) {
    open_ = true;
    p_.t_ms = s.t_ms, p_.samples = 0;
  }
  p_.span_ms = s.t_ms + s.span_ms - p_.t_ms;
  const std::int32_t n = std::max(s.samples, 1);
  p_.samples += n;
  add(kUtil, s.util_pct, n), add(kSm, s.sm_active, n), add(kMemUsed, s.mem_used_bytes, n);
  add(kMemTotal, s.mem_total_bytes, n), add(kPower, s.power_w, n);
  add(kPowerLimit, s.power_limit_w, n), add(kTemp, s.temp_c, n), add(kClock, s.sm_clock_mhz, n);
  keep_min(p_.util_min_pct, s.util_min_pct ? s.util_min_pct : s.util_pct);
  keep_max(p_.util_max_pct, s.util_max_pct ? s.util_max_pct : s.util_pct);
  keep_max(p_.mem_used_max_bytes, s.mem_used_max_bytes ? s.mem_used_max_bytes : s.mem_used_bytes);
  if (s.clock_reasons) p_.clock_reasons = p_.clock_reasons.value_or(0) | *s.clock_reasons;
  const ThrottleCounts c = point_throttle(s, max_sm_clock_mhz);
  p_.thermal_samples += c.thermal, p_.power_samples += c.power;
  p_.hw_slowdown_samples += c.hw_slowdown;
  if (s.ecc_corrected) p_.ecc_corrected = s.ecc_corrected;
  if (s.ecc_uncorrected) p_.ecc_uncorrected = s.ecc_uncorrected;
  p_.lost = p_.lost || s.lost;
}

GpuPoint PointMerger::finish() {
  auto mean = [&](Field f) {
    return n_[f] ? std::optional<double>(sum_[f] / static_cast<double>(n_[f])) : std::nullopt;
  };
  p_.util_pct = mean(kUtil), p_.sm_active = mean(kSm), p_.mem_used_bytes = mean(kMemUsed);
  p_.mem_total_bytes = mean(kMemTotal), p_.power_w = mean(kPower);
  p_.power_limit_w = mean(kPowerLimit), p_.temp_c = mean(kTemp), p_.sm_clock_mhz = mean(kClock);
  GpuPoint out = p_;
  *this = PointMerger{};
  return out;
}

void coarsen_points(GpuSeries& g, std::int64_t width_ms) {
  if (g.points.empty() || width_ms <= 1) return;
  std::vector<GpuPoint> out;
  PointMerger m;
  const std::int64_t t0 = g.points.front().t_ms;
  std::int64_t bucket = -1;
  for (const auto& p : g.points) {
    if (p.span_ms >= width_ms) {  // already as coarse
      if (m.open()) out.push_back(m.finish());
      out.push_back(p);
      continue;
    }
    const std::int64_t b = (p.t_ms - t0) / width_ms;
    if (b != bucket && m.open()) out.push_back(m.finish());
    bucket = b;
    m.add(p, g.max_sm_clock_mhz);
  }
  if (m.open()) out.push_back(m.finish());
  g.points = std::move(out);
}

void finish_run_data(RunData& run) {
  std::sort(run.gpus.begin(), run.gpus.end(),
            [](const GpuSeries& a, const GpuSeries& b) { return a.gpu < b.gpu; });
  std::map<std::int64_t, RankInfo> by_pid;
  for (const auto& s : run.steps) {
    auto& r = by_pid[s.pid];
    r.pid = s.pid;
    if (s.rank) r.rank = s.rank;
    if (s.world_size) r.world_size = s.world_size;
    if (s.device) r.device = s.device;
  }
  for (const auto& e : run.rank_events) {
    auto& r = by_pid[e.pid];
    r.pid = e.pid;
    if (e.rank) r.rank = e.rank;
    if (e.carries_hello()) {
      if (e.kind == "hello") {
        r.hello_ms = e.time_ms;
        r.bye_ms.reset(), r.disconnect_ms.reset();  // a reconnection starts again
      }
      if (e.hello) {
        r.hello = e.hello;
        if (e.hello->device) r.device = e.hello->device;
        if (e.hello->world_size) r.world_size = e.hello->world_size;
      }
    } else if (e.kind == "bye") {
      r.bye_ms = e.time_ms;
    } else if (e.kind == "disconnect" || e.kind == "dropped") {
      r.disconnect_ms = e.time_ms;
    }
  }
  run.ranks.clear();
  for (auto& [pid, r] : by_pid) {
    map_rank(run, r);
    run.ranks.push_back(r);
  }
  std::optional<std::int64_t> lo, hi;
  for (const auto& g : run.gpus)
    if (!g.points.empty()) {
      widen(lo, hi, g.points.front().t_ms);
      widen(lo, hi, g.points.back().t_ms + g.points.back().span_ms);
    }
  for (const auto& s : run.steps)
    if (std::isfinite(s.t_start_s) && std::isfinite(s.t_end_s)) {
      widen(lo, hi, std::llround(s.t_start_s * 1000));
      widen(lo, hi, std::llround(s.t_end_s * 1000));
    }
  for (const auto& e : run.events) widen(lo, hi, e.time_ms);
  for (const auto& e : run.rank_events) widen(lo, hi, e.time_ms);
  if (!run.start_ms) run.start_ms = lo;
  if (!run.end_ms) run.end_ms = hi;
}

const GpuSeries* find_gpu(const RunData& run, unsigned gpu) {
  for (const auto& g : run.gpus)
    if (g.gpu == gpu) return &g;
  return nullptr;
}

PointSetter point_setter(MetricId id) {
  using M = MetricId;
  switch (id) {
    case M::kUtilizationGpuPct: return [](GpuPoint& p, double v) { p.util_pct = v; };
    case M::kSmActiveRatio: return [](GpuPoint& p, double v) { p.sm_active = v; };
    case M::kMemoryUsedBytes: return [](GpuPoint& p, double v) { p.mem_used_bytes = v; };
    case M::kMemoryTotalBytes: return [](GpuPoint& p, double v) { p.mem_total_bytes = v; };
    case M::kPowerDrawW: return [](GpuPoint& p, double v) { p.power_w = v; };
    case M::kPowerLimitW: return [](GpuPoint& p, double v) { p.power_limit_w = v; };
    case M::kTemperatureGpuC: return [](GpuPoint& p, double v) { p.temp_c = v; };
    case M::kSmClockMhz: return [](GpuPoint& p, double v) { p.sm_clock_mhz = v; };
    case M::kEccCorrectedVolatile: return [](GpuPoint& p, double v) { p.ecc_corrected = v; };
    case M::kEccUncorrectedVolatile: return [](GpuPoint& p, double v) { p.ecc_uncorrected = v; };
    case M::kClockEventReasons:
      return [](GpuPoint& p, double v) { p.clock_reasons = static_cast<std::uint64_t>(v); };
    case M::kLost: return [](GpuPoint& p, double v) { p.lost = v != 0; };
    default: return nullptr;
  }
}

}  // namespace gpumon::diagnose
