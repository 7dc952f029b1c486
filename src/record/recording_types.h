// SPDX-License-Identifier: MIT
// Plain data of a recording as the reader returns it (and the writer stores it). Times are wall
// times in ms since the Unix epoch; optional fields were missing when recorded.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/gpu_types.h"
#include "training/training_types.h"

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
  job::JobIdentity job;  ///< the job the node read for it; empty when unknown (or schema < 5)
};

/// The GPU where NVML saw `pid` hold the most memory (a stretch without a memory figure counts
/// as 0); nullopt when NVML never saw it.
std::optional<unsigned> gpu_of_pid(const std::vector<RecordedProcess>& processes, std::int64_t pid);

/// Wall time as stored: ms since the Unix epoch.
std::int64_t to_unix_ms(std::chrono::system_clock::time_point t);
/// "2026-11-29T20:01:53.123Z" (UTC, ms), independent of locale and time zone.
std::string format_iso_ms(std::int64_t unix_ms);

}  // namespace gpumon::record
