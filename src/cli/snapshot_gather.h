// SPDX-License-Identifier: MIT
// Gathers a Snapshot from a GpuBackend (NVML, real or fake) and this host's /proc. The only
// part of the snapshot path that does I/O; the formatters take its result.
//
// Thread-safety: call from the thread that owns the backend.
#pragma once

#include <chrono>
#include <string>

#include "cli/snapshot.h"
#include "gpu/gpu_backend.h"
#include "host/process_inspector.h"

namespace gpumon::cli {

/// The groups the snapshot and the live view show: every cheap one except fan, graphics clock
/// and instantaneous power (each costs microseconds; energy, which costs milliseconds, is left
/// out).
MetricSet snapshot_metrics();

/// This machine's host name, printable; empty when gethostname fails.
std::string host_name();

/// Fills `snap`'s system facts (made printable) and host name.
void set_system(Snapshot& snap, const SystemInfo& system, const std::string& hostname);
/// Appends GPU `info`'s row with `sample`, its NVML strings made printable.
void add_gpu(Snapshot& snap, DeviceStatic info, DeviceSample sample,
             Reading<std::size_t> process_count);
/// Sets `snap.processes` from the GPUs' compute processes (gpu_index set), with this host's
/// details of each; ordered by GPU, then PID.
void set_processes(Snapshot& snap, std::vector<GpuProcess> processes,
                   host::ProcessInspector& inspector, std::chrono::steady_clock::time_point now);

/// One sample of every GPU, its processes and their host details. Every string from NVML is
/// made printable (host::clean_text) here, so formatters can print what they get. `now` is
/// the monotonic time CPU % intervals are measured against.
Snapshot gather_snapshot(
    GpuBackend& backend, host::ProcessInspector& inspector, const std::string& hostname,
    std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now(),
    std::chrono::system_clock::time_point taken_at = std::chrono::system_clock::now());

}  // namespace gpumon::cli
