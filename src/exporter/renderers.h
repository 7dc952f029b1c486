// SPDX-License-Identifier: MIT
// The renderers of /metrics and the JSON API: pure functions of an ExporterView (and, for the
// history, of the sampler's ticks), so they run without any lock and are tested on plain data.
#pragma once

#include <string>
#include <vector>

#include "exporter/exporter_view.h"
#include "exporter/exposition.h"
#include "sampler/sample_sink.h"

namespace gpumon::exporter {

/// The whole /metrics body: self-health, native per-GPU families, and the DCGM families when
/// options.dcgm_compat.
std::string render_metrics(const ExporterView& view, const ExporterOptions& options);
/// The per-GPU native families (after the self-health ones).
void render_native_gpus(const ExporterView& view, const ExporterOptions& options,
                        ExpositionWriter& w);
/// The gpumon_gpu_job_* families: per GPU, each job (job_id, namespace and pod, or container_id)
/// among its processes; processes without a known job are not counted.
void render_gpu_jobs(const ExporterView& view, ExpositionWriter& w);
/// A job's labels (job_id, namespace, pod, and container_id outside a pod), the known ones: on
/// the job families and gpumon_gpu_process_memory_bytes. The values must outlive `out`.
void append_job_labels(const job::JobIdentity& job, std::vector<Label>& out);
/// The `--compat dcgm` families.
void render_dcgm(const ExporterView& view, const ExporterOptions& options, ExpositionWriter& w);

/// The gpumon_training_* families (docs/exporter.md, "Training metrics"); nothing when
/// view.training_enabled is false. Ranks whose labels coincide (a restarted rank still within
/// its staleness period) are written once: the connected, most recently stepping one.
void render_training(const ExporterView& view, ExpositionWriter& w);
/// /api/v1/training.
std::string render_training_json(const ExporterView& view);

std::string render_current_json(const ExporterView& view, const ExporterOptions& options);
std::string render_devices_json(const ExporterView& view, const ExporterOptions& options);
/// The column derived from clock event reasons, SM clock and the max SM clock: 1 throttled, 0
/// not, null without reasons (gpu/throttle.h). In /api/v1/current's metrics and, when asked,
/// in /api/v1/history, beside the catalog's metrics.
inline constexpr std::string_view kThrottledColumn = "throttled";

/// Columns of `metrics` over `ticks` (oldest first), keeping every `stride`-th tick (>= 1);
/// with `throttled_devices` (their max SM clocks), the kThrottledColumn too.
std::string render_history_json(const std::vector<TickSample>& ticks, double interval_s,
                                const std::vector<MetricId>& metrics, std::size_t stride,
                                const std::vector<DeviceStatic>* throttled_devices = nullptr);

/// The `process` label / JSON name of a process: the base name of its executable path, made
/// valid UTF-8 without control characters; "" when NVML gave no name.
std::string process_display_name(const GpuProcess& process);
/// "13.0" for NVML's CUDA driver version 13000.
std::string cuda_version(int driver_version);
/// Unix time in seconds, to the millisecond.
double unix_seconds(WallClock::time_point t);

}  // namespace gpumon::exporter
