// SPDX-License-Identifier: MIT
// The jobs on each GPU in /metrics (docs/exporter.md, "Jobs"): which job, pod or container holds
// a GPU, and its share of the GPU when several do (per-pod attribution on shared GPUs). One
// series per GPU and job, never per pid, so a restart adds no series.
#include <array>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "exporter/renderers.h"

namespace gpumon::exporter {
namespace {

constexpr auto kGauge = MetricType::kGauge;

// The job labels' names, and one job's values (empty: left out). A container's id only outside
// a pod: a pod's restarts would each add a series.
constexpr std::array<std::string_view, 4> kJobLabels{"job_id", "namespace", "pod", "container_id"};

std::array<std::string_view, kJobLabels.size()> label_values(const job::JobIdentity& j) {
  return {j.id, j.pod_namespace, j.pod, j.pod.empty() ? std::string_view(j.container_id) : ""};
}

// What sets one job's series apart on a GPU: its label values.
using JobKey = std::array<std::string, kJobLabels.size()>;

JobKey key_of(const job::JobIdentity& j) {
  const auto v = label_values(j);
  return {std::string(v[0]), std::string(v[1]), std::string(v[2]), std::string(v[3])};
}

struct JobOnGpu {
  double processes = 0;
  double memory_bytes = 0;
  bool has_memory = false;
  double sm_ratio = 0;
  bool has_sm = false;
};

}  // namespace

void append_job_labels(const job::JobIdentity& j, std::vector<Label>& out) {
  const auto values = label_values(j);
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!values[i].empty()) out.push_back({kJobLabels[i], values[i]});
}

void render_gpu_jobs(const ExporterView& v, ExpositionWriter& w) {
  std::vector<std::map<JobKey, std::pair<job::JobIdentity, JobOnGpu>>> by_gpu(v.gpus.size());
  for (unsigned i = 0; i < v.gpus.size(); ++i) {
    const GpuState* g = v.gpu(i);
    if (g == nullptr || !g->has_processes) continue;
    std::set<unsigned> seen;  // NVML may list a pid twice (MIG instances)
    for (const GpuProcess& p : g->processes) {
      if (p.job.empty()) continue;
      auto& [job, on] = by_gpu[i].try_emplace(key_of(p.job), p.job, JobOnGpu{}).first->second;
      if (seen.insert(p.pid).second) on.processes += 1;
      if (p.used_memory_bytes) {
        on.memory_bytes += static_cast<double>(p.used_memory_bytes.value());
        on.has_memory = true;
      }
      if (p.sm_util_pct) {
        on.sm_ratio += p.sm_util_pct.value() / 100.0;
        on.has_sm = true;
      }
    }
  }
  const auto each = [&](std::string_view name, std::string_view help, auto value) {
    w.family(name, help, kGauge);
    for (unsigned i = 0; i < by_gpu.size(); ++i) {
      const std::string gpu = std::to_string(i);
      for (const auto& [key, entry] : by_gpu[i]) {
        const std::optional<double> x = value(entry.second);
        if (!x) continue;
        std::vector<Label> labels{{"gpu", gpu}};
        append_job_labels(entry.first, labels);
        w.sample(labels, *x);
      }
    }
  };
  each("gpumon_gpu_job_processes",
       "Compute processes of one job (job_id, namespace and pod, or container_id) on the GPU",
       [](const JobOnGpu& on) { return std::optional<double>(on.processes); });
  each("gpumon_gpu_job_memory_bytes", "Device memory used by one job's processes on the GPU, bytes",
       [](const JobOnGpu& on) {
         return on.has_memory ? std::optional<double>(on.memory_bytes) : std::nullopt;
       });
  each("gpumon_gpu_job_sm_utilization_ratio",
       "Share of time one job's kernels ran on the GPU, 0-1, from the driver's per-process "
       "samples (absent while it has none)",
       [](const JobOnGpu& on) {
         return on.has_sm ? std::optional<double>(on.sm_ratio) : std::nullopt;
       });
}

}  // namespace gpumon::exporter
