// SPDX-License-Identifier: MIT
// Plain data of a recording as the reader returns it (and the writer stores it). Times are wall
// times in ms since the Unix epoch; optional fields were missing when recorded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/gpu_types.h"

namespace gpumon::record {

/// What the run was; stored in the `meta` table.
struct RunInfo {
  std::string hostname;
  std::string gpumon_version;
  std::string command;  ///< the monitored command line, or empty
  std::string driver_version;
  std::string simulated_scenario;  ///< the fake NVML's scenario name; empty on real GPUs
};

struct RecordedDevice {
  unsigned index = 0;
  std::optional<std::string> name;
  std::optional<std::string> uuid;  ///< sensitive: exports hide it unless asked
  std::optional<std::string> pci_bus_id;
  std::optional<std::int64_t> memory_total_bytes;
  std::optional<std::int64_t> max_sm_clock_mhz;
  std::optional<std::int64_t> max_mem_clock_mhz;
  std::optional<std::int64_t> max_graphics_clock_mhz;
};

RecordedDevice recorded_device(const DeviceStatic& d);

struct RecordedEvent {
  unsigned gpu = 0;
  std::int64_t time_ms = 0;
  std::string kind;  ///< "xid", "ecc_single_bit", "ecc_double_bit", "lost", "recovered"
  std::int64_t value = 0;
};

/// An XID, ECC, lost or recovered event of the sampler as it is stored (kind as text).
RecordedEvent recorded_event(const GpuEvent& e);

/// One stretch of time a process was seen on a GPU (not one row per tick).
struct RecordedProcess {
  unsigned gpu = 0;
  unsigned pid = 0;
  std::optional<std::string> name;
  std::optional<std::int64_t> max_used_memory_bytes;
  std::optional<std::int64_t> last_used_memory_bytes;
  std::int64_t first_seen_ms = 0;
  std::int64_t last_seen_ms = 0;
};

/// One training step of one process, as a training process reported it to the agent (issue 4,
/// docs/python.md). Times are the process's own wall clock in seconds since the Unix epoch;
/// durations in seconds. Allocator fields are torch.cuda.memory_stats() values in bytes or
/// counts, nullopt when the process did not send them (no CUDA, or not read this step).
struct RecordedStep {
  std::int64_t received_ms = 0;  ///< when the agent received it (agent's wall clock)
  std::int64_t pid = 0;
  std::optional<std::int64_t> rank;  ///< RANK / LOCAL_RANK / WORLD_SIZE of the process
  std::optional<std::int64_t> local_rank;
  std::optional<std::int64_t> world_size;
  std::optional<std::string> device;  ///< as torch names it: "cuda:0" (CUDA order), "cpu"
  std::int64_t step = 0;
  double t_start_s = 0;
  double t_end_s = 0;
  double cpu_step_s = 0;             ///< wall time of the step seen from the CPU
  std::optional<double> gpu_step_s;  ///< CUDA events around the step; nullopt: not measured
  double data_wait_s = 0;            ///< blocked waiting for the data loader in this step
  std::optional<std::int64_t> allocated_bytes;       ///< allocated_bytes.all.current
  std::optional<std::int64_t> reserved_bytes;        ///< reserved_bytes.all.current
  std::optional<std::int64_t> active_bytes;          ///< active_bytes.all.current
  std::optional<std::int64_t> inactive_split_bytes;  ///< inactive_split_bytes.all.current
  std::optional<std::int64_t> allocated_peak_bytes;  ///< allocated_bytes.all.peak
  std::optional<std::int64_t> reserved_peak_bytes;   ///< reserved_bytes.all.peak
  std::optional<std::int64_t> num_alloc_retries;
  std::optional<std::int64_t> num_ooms;
};

/// A training process's hello, bye, out-of-memory report or disconnection, as the agent saw it.
struct RecordedRankEvent {
  std::int64_t time_ms = 0;  ///< agent's wall clock
  std::int64_t pid = 0;
  std::optional<std::int64_t> rank;
  std::string kind;    ///< "hello", "bye", "oom", "disconnect", "dropped" (bad input)
  std::string detail;  ///< the message as compact JSON ({} for a disconnect)
};

/// Wall time as stored: ms since the Unix epoch.
std::int64_t to_unix_ms(std::chrono::system_clock::time_point t);
/// "2026-11-29T20:01:53.123Z" (UTC, ms), independent of locale and time zone.
std::string format_iso_ms(std::int64_t unix_ms);

}  // namespace gpumon::record
