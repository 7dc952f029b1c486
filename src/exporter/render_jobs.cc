// SPDX-License-Identifier: MIT
// The jobs on each GPU in /metrics (docs/exporter.md, "Jobs"): which job, pod or container holds
// a GPU, and its share of the GPU when several do (per-pod attribution on shared GPUs). One
// series per GPU and job, never per pid, so a restart adds no series.
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "exporter/renderers.h"

namespace gpumon::exporter {
namespace {

constexpr auto kGauge = MetricType::kGauge;

// What sets one job's series apart on a GPU: the labels job_labels() writes.
using JobKey = std::tuple<std::string, std::string, std::string, std::string>;

JobKey key_of(const job::JobIdentity& j) {
  return {j.id, j.pod_namespace, j.pod, j.pod.empty() ? j.container_id : std::string()};
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
  if (!j.id.empty()) out.push_back({"job_id", j.id});
  if (!j.pod_namespace.empty()) out.push_back({"namespace", j.pod_namespace});
  if (!j.pod.empty()) out.push_back({"pod", j.pod});
  // A container's id only outside a pod: a pod's restarts would each add a series.
  if (j.pod.empty() && !j.container_id.empty()) out.push_back({"container_id", j.container_id});
}

void render_gpu_jobs(const ExporterView& v, ExpositionWriter& w) {
  std::vector<std::map<JobKey, std::pair<job::JobIdentity, JobOnGpu>>> by_gpu(v.gpus.size());
  for (unsigned i = 0; i < v.gpus.size(); ++i) {
    const GpuState* g = v.gpu(i);
    if (g == nullptr || !g->has_processes) continue;
    std::map<unsigned, const GpuProcess*> seen;  // NVML may list a pid twice (MIG instances)
    for (const GpuProcess& p : g->processes) {
      if (p.job.empty()) continue;
      auto& [job, on] = by_gpu[i].try_emplace(key_of(p.job), p.job, JobOnGpu{}).first->second;
      if (seen.emplace(p.pid, &p).second) on.processes += 1;
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
