// SPDX-License-Identifier: MIT
#include "diagnose/test_builder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "training/protocol.h"

namespace gpumon::diagnose::testing {

GpuSeries& add_gpu(RunData& run, unsigned gpu, int n, std::int64_t dt_ms,
                   const std::function<void(GpuPoint&, int)>& edit) {
  GpuSeries g;
  g.gpu = gpu;
  g.name = "NVIDIA H200";
  g.uuid = "GPU-0000000" + std::to_string(gpu);
  g.pci_bus_id = "00000000:0" + std::to_string(gpu) + ":00.0";
  g.memory_total_bytes = 80 * kGiB;
  g.max_sm_clock_mhz = 1980;
  for (int i = 0; i < n; ++i) {
    GpuPoint p;
    p.t_ms = kT0Ms + i * dt_ms;
    p.util_pct = 95, p.sm_active = 0.8, p.mem_used_bytes = 40 * kGiB, p.mem_total_bytes = 80 * kGiB;
    p.power_w = 500, p.power_limit_w = 700, p.temp_c = 60, p.sm_clock_mhz = 1980;
    p.clock_reasons = 0;
    if (edit) edit(p, i);
    g.points.push_back(p);
  }
  run.gpus.push_back(std::move(g));
  return run.gpus.back();
}

void add_rank(RunData& run, std::int64_t pid, std::int64_t rank, std::int64_t world, int n,
              double step_s, const std::function<void(training::Step&, int)>& edit) {
  const double t0 = static_cast<double>(kT0Ms) / 1000;
  run.rank_events.push_back(training::rank_event(kT0Ms, pid, rank, "hello",
                                                 R"({"type":"hello","pid":)" + std::to_string(pid) +
                                                     R"(,"device":"cuda:)" + std::to_string(rank) +
                                                     R"(","pci_bus_id":"0000:0)" +
                                                     std::to_string(rank) + R"(:00.0"})"));
  for (int i = 0; i < n; ++i) {
    training::Step s;
    s.pid = pid, s.rank = rank, s.local_rank = rank, s.world_size = world;
    s.device = "cuda:" + std::to_string(rank);
    s.step = i;
    s.t_start_s = t0 + i * step_s;
    s.t_end_s = s.t_start_s + step_s;
    s.received_ms = std::llround(s.t_end_s * 1000);
    s.cpu_step_s = step_s;
    s.gpu_step_s = 0.9 * step_s;
    s.data_wait_s = 0.01 * step_s;
    s.allocated_bytes = static_cast<std::int64_t>(10 * kGiB);
    s.reserved_bytes = static_cast<std::int64_t>(12 * kGiB);
    s.inactive_split_bytes = static_cast<std::int64_t>(100 * kMiB);
    s.num_alloc_retries = 0;
    s.num_ooms = 0;
    if (edit) edit(s, i);
    run.steps.push_back(s);
  }
}

GpuPoint bare_point(std::int64_t t_ms, std::optional<double> util_pct) {
  GpuPoint p;
  p.t_ms = t_ms;
  p.util_pct = util_pct;
  return p;
}

Diagnosis run_diagnose(RunData& run, const Thresholds& t) {
  // Steps arrive in end order in a recording; the rules must not depend on it, but keep it.
  std::stable_sort(run.steps.begin(), run.steps.end(),
                   [](const auto& a, const auto& b) { return a.t_end_s < b.t_end_s; });
  finish_run_data(run);
  Diagnosis d = diagnose(run, t);
  for (const auto& f : d.findings) {
    EXPECT_GE(f.confidence, 0) << f.id;
    EXPECT_LE(f.confidence, 1) << f.id;
    EXPECT_FALSE(f.summary.empty()) << f.id;
    EXPECT_FALSE(f.advice.empty()) << f.id;
    for (const auto& [k, v] : f.evidence) {
      if (const auto* x = std::get_if<double>(&v)) {
        EXPECT_TRUE(std::isfinite(*x)) << f.id << " " << k;
      }
    }
  }
  EXPECT_GE(d.health_score, 0);
  EXPECT_LE(d.health_score, 100);
  const auto dumped = to_json(d, "test").dump();
  EXPECT_EQ(dumped.find("NaN"), std::string::npos);
  EXPECT_FALSE(render_text(d, "test").empty());
  return d;
}

const Finding* find(const Diagnosis& d, const std::string& id, Severity min) {
  for (const auto& f : d.findings)
    if (f.id == id && f.severity >= min) return &f;
  return nullptr;
}

std::string warnings(const Diagnosis& d) {
  std::string s;
  for (const auto& f : d.findings)
    if (f.severity >= Severity::kWarning)
      s += (s.empty() ? "" : ",") + f.id + " (" + f.summary + ")";
  return s;
}

double evidence(const Finding& f, const std::string& name) {
  for (const auto& [k, v] : f.evidence)
    if (k == name)
      if (const auto* x = std::get_if<double>(&v)) return *x;
  return std::nan("");
}

}  // namespace gpumon::diagnose::testing
