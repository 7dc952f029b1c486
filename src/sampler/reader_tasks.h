// SPDX-License-Identifier: MIT
// The sampler's reads beyond the cheap sample, as Tasks: GPM, the driver's sample buffers and
// PCIe throughput fill their DeviceSample fields; per-process utilization is merged into the
// process list the processes task read. make_builtin_tasks() adds the ones the config asks for.
#pragma once

#include <vector>

#include "sampler/sampler_task.h"

namespace gpumon {

/// GPM ratios over the time since this GPU's previous GPM read (the first read of each GPU only
/// starts the window). GPUs without GPM get kNotSupported, found once by the backend.
Task make_gpm_task(const SamplerConfig& config);
/// "power_samples" (power_max_w) and "utilization_samples" (utilization_gpu_max_pct): the
/// highest driver sample since that buffer's previous read, each at its own period.
std::vector<Task> make_driver_samples_tasks(const SamplerConfig& config);
/// pcie_tx_bytes_per_s and pcie_rx_bytes_per_s (about 40 ms per GPU: off by default).
Task make_pcie_task(const SamplerConfig& config);

/// Sets each process's sm_util_pct / mem_util_pct from `util` (matched by pid); a process the
/// driver had no sample for stays kNotAvailable; when `util` is missing, every process gets
/// its reason (kNotSupported on GPUs without per-process accounting).
void merge_process_utilization(std::vector<GpuProcess>& processes,
                               const Reading<std::vector<ProcessUtilization>>& util);

}  // namespace gpumon
