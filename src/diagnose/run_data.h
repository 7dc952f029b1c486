// SPDX-License-Identifier: MIT
// RunData: the plain input the diagnosis rules read, whatever it came from (a recording through
// load_run_data(), the live agent's history, or a test that builds it by hand). Times are wall
// times in ms since the Unix epoch; every optional value is missing when unset, never 0.
//
// Bounded memory: a GPU's samples are kept raw only for the most recent `max_raw_points` of
// them; older samples are merged into at most `max_buckets` fixed-width buckets (GpuPoint with
// `samples` > 1): each field holds the mean of the samples that had it, `util_min/max` and
// `mem_used_max_bytes` keep the extremes, `clock_reasons` is the OR of the masks, and the
// throttle counters count the samples that had each throttle cause while below max clocks, so
// shares stay exact. Rules weigh a point by `samples`.
//
// Thread-safety: plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/metric_catalog.h"
#include "record/recording_types.h"

namespace gpumon::diagnose {

/// One sample of a GPU, or (samples > 1) the aggregate of a bucket of older samples.
struct GpuPoint {
  std::int64_t t_ms = 0;           ///< the sample's time; a bucket's first sample
  std::int64_t span_ms = 0;        ///< 0 for a sample; last - first sample time of a bucket
  std::int32_t samples = 1;        ///< how many samples this point stands for
  std::optional<double> util_pct;  ///< NVML utilization, 0-100
  std::optional<double> util_min_pct, util_max_pct;  ///< buckets only
  std::optional<double> sm_active;                   ///< GPM SM activity, 0-1
  std::optional<double> mem_used_bytes, mem_total_bytes;
  std::optional<double> mem_used_max_bytes;  ///< buckets only
  std::optional<double> power_w, power_limit_w;
  std::optional<double> temp_c;
  std::optional<double> sm_clock_mhz, max_sm_clock_mhz;
  std::optional<std::uint64_t> clock_reasons;            ///< NVML clock event reasons bitmask
  std::optional<double> ecc_corrected, ecc_uncorrected;  ///< volatile counters (bucket: last)
  bool lost = false;                                     ///< the GPU was lost (bucket: any sample)
  /// Buckets only: samples with a thermal / power / hardware-slowdown reason while the SM clock
  /// was below max (or unknown). Raw samples compute it from `clock_reasons` (throttle.h).
  std::int32_t thermal_samples = 0, power_samples = 0, hw_slowdown_samples = 0;
};

struct GpuSeries {
  unsigned gpu = 0;  ///< NVML index
  std::optional<std::string> name, uuid, pci_bus_id;
  std::optional<double> memory_total_bytes, max_sm_clock_mhz;
  std::vector<GpuPoint> points;  ///< time order: buckets first, then raw samples
};

/// A training process (one rank) as the agent saw it, and the NVML GPU it runs on if known.
struct RankInfo {
  std::int64_t pid = 0;
  std::optional<std::int64_t> rank, world_size;
  std::optional<std::string> device;     ///< "cuda:N" as torch names it
  std::optional<training::Hello> hello;  ///< its latest
  std::optional<unsigned> gpu;           ///< mapped NVML index
  std::string gpu_mapped_by;             ///< training::device_rule_name(); empty when unmapped
  std::optional<std::int64_t> hello_ms, bye_ms, disconnect_ms;
};

/// How the command `gpumon record` ran ended (the recording's command_* meta).
struct CommandEnd {
  int exit_status = 0;                     ///< as a shell gives it: 128 + N for signal N
  std::string signal;                      ///< "SIGKILL"; empty when it exited by itself
  std::optional<std::uint64_t> oom_kills;  ///< OOM-killer kills in gpumon's cgroup meanwhile
};

struct RunData {
  std::string source;              ///< the recording's path, or "live"
  std::string hostname;            ///< the machine it was recorded on; empty when unknown
  std::string simulated_scenario;  ///< the fake NVML's scenario it was made on; empty: real GPUs
  /// What the data is: the live window (still growing), a closed recording, or a recording
  /// without an end time (gpumon stopped without closing it: killed, crashed, lost power), whose
  /// data may stop before the run did. diagnose() says what a recording's data cannot cover.
  enum class Kind : std::uint8_t { kLive, kRecording, kRecordingCutShort };
  Kind kind = Kind::kLive;
  /// What the reader found wrong with the file beside its data (a killed recording whose -wal
  /// file is missing or damaged: only what was checkpointed is here); empty when nothing.
  std::string read_warning;
  std::optional<CommandEnd> command_end;  ///< a recording of `gpumon record -- CMD`: how CMD ended
  std::optional<std::int64_t> start_ms, end_ms;  ///< the run's span (samples, steps, events)
  std::vector<GpuSeries> gpus;                   ///< by NVML index
  std::vector<record::RecordedEvent> events;     ///< xid / ecc / lost / recovered
  std::vector<record::RecordedProcess> processes;
  std::vector<training::Step> steps;  ///< every rank, in the order they ended
  std::vector<training::RankEvent> rank_events;
  std::vector<RankInfo> ranks;  ///< one per pid that sent steps or rank events (finish_run_data)
  /// The node's samples of each process's CPU time and memory (node/process_watcher.h), every
  /// process, in time order; bounded like the steps (load_run_data, LiveWindow).
  std::vector<training::ProcessSample> process_samples;
};

/// Merges points into one bucket (the loader's buckets of older samples, coarsen_points()): a
/// field's mean is over the samples that had it (a bucket counts as its `samples`), the extremes
/// and counters as run_data.h's header says. add() in time order, then finish().
class PointMerger {
 public:
  bool open() const { return open_; }
  void add(const GpuPoint& p, const std::optional<double>& max_sm_clock_mhz);
  GpuPoint finish();  ///< the bucket; the merger is empty again

 private:
  enum Field : std::size_t { kUtil, kSm, kMemUsed, kMemTotal, kPower, kPowerLimit, kTemp, kClock };
  static constexpr std::size_t kFields = 8;
  void add(Field f, std::optional<double> v, std::int32_t n);
  double sum_[kFields] = {};
  std::int64_t n_[kFields] = {};
  GpuPoint p_;  // extremes, reasons, counters, lost, times
  bool open_ = false;
};

/// Merges `g`'s points into buckets of `width_ms` (from its first point's time), so a long
/// run of many GPUs fits in memory where per-second figures suffice (a job's nodes side by
/// side, diagnose/job). Buckets already wider are kept as they are.
void coarsen_points(GpuSeries& g, std::int64_t width_ms);

/// Fills `ranks` from steps and rank events, maps each to an NVML GPU (training/rank_device.h,
/// with the GPU where NVML saw its pid use the most memory), and sets start/end from the data
/// when unset. Call once after filling the rest.
void finish_run_data(RunData& run);

/// The series of NVML GPU `gpu`, or nullptr.
const GpuSeries* find_gpu(const RunData& run, unsigned gpu);

/// Sets the GpuPoint field that metric `id` feeds from `value` (in the catalog's unit). The live
/// window and the recording loader fill raw points through this one mapping.
using PointSetter = void (*)(GpuPoint& p, double value);
/// nullptr for a metric the diagnosis does not read.
PointSetter point_setter(MetricId id);

}  // namespace gpumon::diagnose
