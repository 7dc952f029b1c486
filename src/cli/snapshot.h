// SPDX-License-Identifier: MIT
// Snapshot: one reading of every GPU and its processes, as plain data. The CLI gathers it
// (snapshot_gather.h); the text, JSON and live-view formatters only read it, so each can be
// tested over hand-made values.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/gpu_types.h"
#include "host/host_process.h"
#include "host/host_usage.h"

namespace gpumon::cli {

struct GpuSnapshot {
  DeviceStatic info;
  DeviceSample sample;
  /// Number of compute processes, or why the list could not be read (kGpuLost, kNotSupported).
  Reading<std::size_t> process_count;
  /// The newest XID the GPU raised while the live view watched (a one-shot snapshot watches no
  /// events); shown on a lost GPU's row, where it says why.
  std::optional<std::uint64_t> last_xid;
};

/// A GPU process: NVML's view (PID, GPU memory, name) and this host's view of the same PID.
struct ProcessRow {
  GpuProcess gpu;
  host::HostProcessInfo host;
};

/// A finding of the diagnoses (docs/DIAGNOSES.md) that one reading supports
/// (snapshot_findings.h).
struct SnapshotFinding {
  std::string id;
  std::string severity;  ///< "info", "warning", "critical"
  std::vector<unsigned> gpus;
  std::string summary;
};

/// A training process attached to this node's gpumon agent (training/rank_memory.h): its latest
/// step's PyTorch allocator memory, on the GPU the one rank -> GPU mapping gives.
struct RankRow {
  std::optional<unsigned> gpu;  ///< NVML index; nullopt: not mapped (a CPU run, ...)
  std::int64_t pid = 0;
  std::optional<std::int64_t> rank;
  std::int64_t step = 0;
  std::optional<std::int64_t> allocated_bytes, reserved_bytes;  ///< nullopt: not sent
  std::optional<double> step_s, data_wait_s;  ///< the latest step's time and data wait
  double age_s = 0;                           ///< since its latest step reached the agent
};

struct Snapshot {
  SystemInfo system;
  std::string hostname;
  std::chrono::system_clock::time_point taken_at{};
  std::vector<GpuSnapshot> gpus;
  std::vector<ProcessRow> processes;  ///< ordered by GPU index, then PID
  std::vector<RankRow> ranks;         ///< ordered by GPU index (unmapped last), rank, PID
  std::vector<SnapshotFinding> findings;
  /// The host's CPU (between two frames) and memory: the live view fills it, a one-off
  /// snapshot cannot measure CPU use and leaves it out.
  std::optional<host::HostUsage> host_usage;
};

}  // namespace gpumon::cli
