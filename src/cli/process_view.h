// SPDX-License-Identifier: MIT
// Which GPU processes the live view lists, in which order: a filter (text and GPU), a sort
// key and direction, and the tree view (each process under its GPU-process parent, ranks
// grouped under the launcher that started them, e.g. torchrun). Pure: the launchers' details
// come in from the caller, which reads them from /proc.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/snapshot.h"
#include "host/process_brief.h"

namespace gpumon::cli {

enum class ProcessSort : unsigned char {
  kGpu,
  kGpuMemory,
  kSmUtil,
  kCpu,
  kHostMemory,
  kTime,
  kPid
};

/// The column name the footer shows: "GPU", "GPU mem", "SM %", "CPU %", "RSS", "time", "PID".
const char* sort_name(ProcessSort sort);
/// The next key in the order above, after the last the first.
ProcessSort next_sort(ProcessSort sort);

struct ProcessViewState {
  ProcessSort sort = ProcessSort::kGpu;
  bool reverse = false;         ///< against the key's natural order (biggest or oldest first)
  std::string filter;           ///< case-insensitive substring of the user, command line or PID
  std::optional<unsigned> gpu;  ///< only this GPU (its block and its processes)
  bool tree = false;
};

/// A row of the list: a process on one GPU (a process on two GPUs has two rows).
struct ProcessKey {
  unsigned pid = 0;
  unsigned gpu = 0;
  bool operator==(const ProcessKey& o) const { return pid == o.pid && gpu == o.gpu; }
};

struct ProcessLine {
  const ProcessRow* row = nullptr;               ///< null for a launcher line
  const host::ProcessBrief* launcher = nullptr;  ///< set for a launcher line
  std::size_t depth = 0;                         ///< tree depth (0 outside the tree view)
  std::optional<ProcessKey> key() const {
    if (row == nullptr) return std::nullopt;
    return ProcessKey{row->gpu.pid, row->gpu.gpu_index};
  }
};

/// The lines to list, in order. `launchers` maps a PID to its details for the tree view: a
/// process whose parent is no GPU process but is in `launchers` is listed under it.
std::vector<ProcessLine> arrange_processes(const Snapshot& snap, const ProcessViewState& state,
                                           const std::map<unsigned, host::ProcessBrief>& launchers);

/// The parents the tree view would group under: the PIDs of the listed processes' parents that
/// are no GPU process and not init (PID 1 or 0). The caller reads them into `launchers`.
std::vector<unsigned> launcher_pids(const Snapshot& snap);

}  // namespace gpumon::cli
