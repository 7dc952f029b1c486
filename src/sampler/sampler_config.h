// SPDX-License-Identifier: MIT
// What the sampler reads and how often, and the statistics it keeps about itself.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/gpu_backend.h"
#include "sampler/sample_sink.h"

namespace gpumon {

struct SamplerConfig {
  /// Time between ticks: 10 ms (100 Hz) to 60 s.
  std::chrono::milliseconds interval{1000};
  /// Groups read every tick. kEnergy and kStaticDetails here are moved to their own tasks.
  MetricSet metrics =
      MetricSet(MetricGroup::kUtilization) | MetricGroup::kMemory | MetricGroup::kTemperature |
      MetricGroup::kMemoryTemperature | MetricGroup::kPower | MetricGroup::kPowerInstant |
      MetricGroup::kPowerLimit | MetricGroup::kSmClock | MetricGroup::kMemClock |
      MetricGroup::kGraphicsClock | MetricGroup::kPstate | MetricGroup::kFan |
      MetricGroup::kClockEvents | MetricGroup::kEcc | MetricGroup::kEncoderUtil |
      MetricGroup::kDecoderUtil | MetricGroup::kPcieReplay | MetricGroup::kRemappedRows |
      MetricGroup::kNvlinkThroughput | MetricGroup::kJpegUtil | MetricGroup::kOfaUtil |
      MetricGroup::kPerfPolicyTime | MetricGroup::kSlowdownTime | MetricGroup::kTemperatureMargin |
      MetricGroup::kBar1Memory;
  /// Groups of `metrics` that change slowly or matter only at a human pace: read every
  /// slow_metrics_period instead of every tick (each NVML call costs 5-90 us on an H200 when
  /// its value is not cached, so at 10-100 Hz they would double the per-tick cost).
  MetricSet slow_metrics =
      MetricSet(MetricGroup::kTemperature) | MetricGroup::kMemoryTemperature |
      MetricGroup::kPowerLimit | MetricGroup::kMemClock | MetricGroup::kGraphicsClock |
      MetricGroup::kPstate | MetricGroup::kFan | MetricGroup::kEcc | MetricGroup::kEncoderUtil |
      MetricGroup::kDecoderUtil | MetricGroup::kPcieReplay | MetricGroup::kRemappedRows |
      MetricGroup::kNvlinkThroughput | MetricGroup::kJpegUtil | MetricGroup::kOfaUtil |
      MetricGroup::kPerfPolicyTime | MetricGroup::kSlowdownTime | MetricGroup::kTemperatureMargin |
      MetricGroup::kBar1Memory;
  /// Raised to the interval when shorter (at 1 s and slower every group is read every tick).
  std::chrono::milliseconds slow_metrics_period{1000};
  /// Utilization (kUtilization, if in `metrics`) at most this often: NVML computes it over its
  /// own 1/6-1 s window, so reading it at 100 Hz returns the same value ten times for about
  /// 55 us each on an H200. Raised to the interval when shorter.
  std::chrono::milliseconds utilization_period{100};
  bool energy = true;  ///< read energy_mj (3-7 ms of busy CPU per H200 per read)
  /// Energy period; raised to the interval when shorter. energy_mj is a counter, so a slow
  /// read loses nothing: 10 s keeps its cost at 0.03-0.07 % of a core per H200.
  std::chrono::milliseconds energy_period{10000};
  bool static_details = true;  ///< read kStaticDetails once per GPU (about 11 ms per H200)
  bool processes = true;       ///< read the compute processes of every GPU
  /// Process-list period; raised to the interval when shorter.
  std::chrono::milliseconds process_period{2000};
  /// Fill the processes' host details (user, command line, CPU %, RSS) from /proc.
  bool host_process_details = true;
  /// With each process list, read per-process SM and memory utilization (one more call).
  bool process_utilization = true;
  /// GPM (Hopper and newer): SM active, occupancy, tensor pipe, DRAM bandwidth, averaged over
  /// the period. At least 100 ms (NVML's minimum between GPM samples); raised to the interval.
  bool gpm = true;
  std::chrono::milliseconds gpm_period{1000};
  /// The driver's power and utilization sample buffers (power_max_w, utilization_gpu_max_pct).
  /// The H200 keeps about 2.4 s of 20 ms power samples (measured), so a 2 s period loses
  /// none; each read costs about 1.5 ms there.
  bool driver_samples = true;
  std::chrono::milliseconds driver_samples_period{2000};  ///< the power buffer
  /// The utilization buffer keeps about 14 s of 200 ms samples on an H200.
  std::chrono::milliseconds utilization_samples_period{10000};
  /// PCIe TX/RX throughput: each read blocks about 20 ms per direction, so off unless asked.
  bool pcie = false;
  std::chrono::milliseconds pcie_period{1000};
  /// XID and ECC events from the backend's event stream (a thread blocked in NVML).
  bool events = true;
  /// Ticks kept in Sampler::history(). Memory: capacity * GPUs * sizeof(DeviceSample).
  std::size_t history_capacity = 3600;
  /// Upper bound of the history's memory: with many GPUs the capacity is lowered to fit
  /// (256 GPUs: about 400 ticks instead of 3600). See history_ticks().
  std::size_t history_max_bytes = std::size_t{64} << 20;
  std::size_t event_capacity = 1024;  ///< GpuEvents kept in Sampler::events()
  /// A slow task (one with a period) is stretched so that its measured cost over all GPUs
  /// stays under this share of one core: period >= cost per GPU * GPUs / share.
  double slow_task_cpu_share = 0.05;
  /// The least a tick waits for its reader before it publishes a GPU whose call has not
  /// returned as stale: a busy machine's scheduling delays are not hangs. Otherwise a tick waits
  /// until a tenth of an interval before the next one, so this matters above 10 Hz only.
  std::chrono::milliseconds min_reader_wait{50};
  /// The longest stop() waits for the GPUs' calls in progress and the final tick together; a
  /// reader still inside a hung NVML call after that is left behind (Sampler::stop()).
  std::chrono::milliseconds stop_timeout{2000};
};

/// Throws std::invalid_argument, naming the setting, when `config` is out of range.
void validate(const SamplerConfig& config);

/// Ticks the history holds for `gpus` GPUs: history_capacity, lowered so that the samples fit in
/// history_max_bytes; at least 1.
std::size_t history_ticks(const SamplerConfig& config, unsigned gpus);

struct TaskStats {
  std::string name;
  std::chrono::microseconds period{0};  ///< as scheduled now (0: every tick)
  std::uint64_t runs = 0;               ///< calls, one per GPU per due tick, late ones apart
  double mean_cost_us = 0;              ///< injected-clock time around one call
  double max_cost_us = 0;
  /// Calls that returned after their tick was published (their GPU was stale): counted in
  /// max_cost_us only, so a hang does not stretch the task's period.
  std::uint64_t late = 0;
  std::uint64_t exceptions = 0;  ///< calls that threw (caught)
};

/// A GPU whose reader has not returned from a call: published with every reading kStale.
struct StaleGpu {
  unsigned gpu = 0;
  std::string call;  ///< StaleCall::call: the NVML function or the sampler's task
  double for_s = 0;  ///< how long the call had run at the newest tick
};

/// Thread-safety: a copy, returned by Sampler::stats().
struct SamplerStats {
  std::uint64_t ticks = 0;
  std::uint64_t overruns = 0;         ///< ticks that took longer than the interval
  std::uint64_t missed_ticks = 0;     ///< schedule slots skipped because a tick overran
  std::uint64_t nvml_errors = 0;      ///< readings that came back Missing::kError
  std::uint64_t exceptions = 0;       ///< caught on the sampler thread (tasks and the tick)
  std::uint64_t sink_errors = 0;      ///< sink calls that threw
  bool events_watched = false;        ///< the backend's event stream runs (XID/ECC)
  std::uint64_t events_received = 0;  ///< XID/ECC events passed on to events() and the sinks
  std::uint64_t events_dropped = 0;   ///< events that arrived faster than ticks could take them
  MonoClock::time_point last_tick{};
  double last_tick_duration_us = 0;
  double max_tick_duration_us = 0;
  /// CPU time of the sampler thread plus its readers' (CLOCK_THREAD_CPUTIME_ID each, a
  /// reader's as of its newest finished job).
  double thread_cpu_s = 0;
  std::vector<unsigned> lost_gpus;
  std::vector<StaleGpu> stale_gpus;  ///< at the newest tick, by GPU index
  std::vector<TaskStats> tasks;
};

}  // namespace gpumon
