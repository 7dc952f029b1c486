// SPDX-License-Identifier: MIT
// What the renderers of /metrics and the JSON API read: a copy of ExporterState's data taken
// under its lock, plus the sampler's facts, so rendering runs without any lock held.
// Plain data.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exporter/training_state.h"
#include "gpu/gpu_types.h"
#include "gpu/metric_catalog.h"
#include "sampler/last_known.h"
#include "sampler/sampler_config.h"

namespace gpumon::exporter {

/// GPUs of a larger NVML index are ignored by the exporter, not allocated for.
inline constexpr unsigned kMaxGpuIndex = 4096;

/// HTTP request counts, for gpumon_http_requests_total and gpumon_http_rejected_total.
struct HttpCounts {
  std::map<int, std::uint64_t> requests;          ///< status code -> requests answered
  std::map<std::string, std::uint64_t> rejected;  ///< reason -> requests refused
};

struct ExporterOptions {
  bool dcgm_compat = false;  ///< also emit the DCGM_FI_* families (`--compat dcgm`)
  bool show_uuid = false;    ///< put UUIDs in labels and JSON (`--uuid`); serials: never
  std::string hostname;      ///< the DCGM `Hostname` / `hostname` label
  std::string version;       ///< gpumon_build_info{version}
  std::string revision;      ///< gpumon_build_info{revision}
  /// Optional: read at each render (e.g. from src/http's HttpCounters, which counts in the
  /// server) and added to what count_request() / count_rejected() counted. Called from the
  /// rendering thread without ExporterState's lock; must be thread-safe and not throw.
  std::function<HttpCounts()> http_counts;
  /// Optional: the training processes attached to serve's agent socket (fed by its sinks).
  /// When set, /metrics has the gpumon_training_* families and /api/v1/training their JSON.
  std::shared_ptr<TrainingState> training;
};

/// The newest known state of one GPU.
struct GpuState {
  bool seen = false;  ///< appeared in at least one tick
  bool lost = false;  ///< lost in the newest tick that had it
  /// Stale in the newest tick (its reader inside a call that has not returned): the call, and
  /// how long it had run at that tick (seconds).
  std::optional<std::string> stale_call;
  double stale_for_s = 0;
  /// Newest known value of every catalog metric (held as LastKnown says: a value vanishes
  /// once older than hold_time(), never written as 0).
  LastKnown known;
  std::map<std::uint64_t, std::uint64_t> xid_counts;  ///< XID -> events since start
  std::optional<std::uint64_t> last_xid;
  WallClock::time_point last_xid_time{};
  std::uint64_t ecc_single_bit_events = 0;
  std::uint64_t ecc_double_bit_events = 0;
  /// NVLink TX + RX over all links, as DCGM computes DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL: the
  /// growth of NVML's KiB counters between two reads, per second, divided by 1000 ("MB/s").
  /// Set from the second read on; it goes with the counters when they go stale.
  std::optional<double> nvlink_mb_per_s;
  std::optional<double> nvlink_prev_kib;  ///< the counters' sum at the previous read
  MonoClock::time_point nvlink_prev_time{};
  bool has_processes = false;  ///< a process list was read (and is not stale)
  MonoClock::time_point processes_time{};
  /// Between the last two lists (none before the second, or after an outage): the sampler
  /// stretches the process task's period with the GPU count, and a list is held 1.5 of it.
  MonoClock::duration processes_gap{};
  bool processes_seen = false;  ///< processes_time holds a list's time (held or since expired)
  std::vector<GpuProcess> processes;
};

struct ExporterView {
  SystemInfo system;
  std::vector<DeviceStatic> devices;
  SamplerStats stats;
  SamplerConfig config;
  std::size_t history_capacity = 0;  ///< ticks the sampler's history holds
  std::vector<GpuState> gpus;        ///< indexed by NVML index; may be shorter than devices
  bool have_tick = false;
  WallClock::time_point last_tick_wall{};
  double last_tick_age_s = 0;  ///< at render time (since construction when no tick yet)
  bool up = false;             ///< the newest tick is fresh (Health::ok)
  WallClock::time_point now_wall{};
  HttpCounts http;                ///< counted here plus ExporterOptions::http_counts
  bool training_enabled = false;  ///< ExporterOptions::training was set
  TrainingSnapshot training;

  /// The state of GPU `index`, or nullptr when it never appeared.
  const GpuState* gpu(unsigned index) const {
    return index < gpus.size() && gpus[index].seen ? &gpus[index] : nullptr;
  }
};

/// The DeviceStatic of GPU `index` in `view`, or nullptr.
inline const DeviceStatic* find_device(const ExporterView& view, unsigned index) {
  for (const DeviceStatic& d : view.devices)
    if (d.index == index) return &d;
  return nullptr;
}

}  // namespace gpumon::exporter
