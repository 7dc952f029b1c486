// SPDX-License-Identifier: MIT
#include "diagnose/run_data.h"

#include <algorithm>
#include <cmath>
#include <map>

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

}  // namespace

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
