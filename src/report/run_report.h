// SPDX-License-Identifier: MIT
// RunReport: what `gpumon report` shows of one recording, gathered in one pass over its sample
// chunks (one chunk decoded at a time, so memory does not grow with the run's length): per GPU
// the summary figures, min/max/mean series on a grid shared by every GPU, throttling and lost
// intervals; the run's events and processes.
//
// Thread-safety: plain values.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/metric_catalog.h"
#include "record/recording_reader.h"
#include "report/downsample.h"
#include "report/rank_steps.h"
#include "report/report_findings.h"

namespace gpumon::report {

/// The series a GPU's charts draw, in display units.
enum class Series : std::uint8_t { kUtil, kSmActive, kMemUsed, kPower, kTemp, kSmClock, kMemClock };
inline constexpr std::size_t kSeriesCount = 7;

struct SeriesInfo {
  Series id;
  MetricId source;
  std::string_view key;  ///< name in the page's JSON
  double scale;          ///< display value = recorded value * scale
  int decimals;          ///< written with at most this many decimals
};
const SeriesInfo& series_info(Series s);

struct Interval {
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;  ///< the last sample inside (equal to start_ms for one sample)
};

struct Mean {
  double sum = 0;
  std::int64_t n = 0;
  void add(double v) { sum += v, ++n; }
  std::optional<double> value() const { return n ? std::optional<double>(sum / n) : std::nullopt; }
};

/// When a series' samples came (its metric may be read less often than every tick).
struct SeriesTiming {
  std::int64_t first_ms = 0, last_ms = 0, count = 0;
  /// The mean time between its samples; 0 with fewer than two.
  std::int64_t interval_ms() const { return count > 1 ? (last_ms - first_ms) / (count - 1) : 0; }
};

struct GpuReport {
  unsigned gpu = 0;
  std::string name;  ///< as recorded (not yet escaped); empty when unknown
  std::optional<std::string> pci_bus_id;
  std::optional<std::int64_t> memory_total_bytes;
  std::int64_t samples = 0;
  Mean util_pct, sm_active_ratio, power_w, temp_c;
  std::optional<double> peak_memory_bytes, max_power_w, max_temp_c;
  /// The energy counter's span plus power integrated over time where the counter does not
  /// reach (before its first and after its last reading, and from the recording's start and to
  /// its end at the nearest power reading); power alone without two counter readings.
  std::optional<double> energy_j;
  bool energy_from_counter = false;  ///< the counter measured part of energy_j
  std::int64_t reason_samples = 0;   ///< samples with clock event reasons
  /// Of those, throttled: a throttle reason while the SM clock was below max (gpu/throttle.h,
  /// the diagnosis's definition).
  std::int64_t throttle_samples = 0;
  int xids = 0;
  bool lost = false;  ///< a lost event or a lost sample
  std::array<BucketSeries, kSeriesCount> series;
  std::array<SeriesTiming, kSeriesCount> timing;
  std::vector<Interval> throttled, lost_intervals;  ///< throttled: as throttle_samples
};

/// The training steps the processes reported (none in version-1 recordings).
struct StepFigures {
  std::int64_t records = 0;    ///< step rows, every process
  std::int64_t processes = 0;  ///< distinct pids
  std::int64_t steps = 0;      ///< steps of the process that reported the most
  double cpu_step_s = 0;       ///< sum over every row
  training::WaitTally wait;    ///< over every row that measured its wait
};

struct RunReport {
  std::string path;
  std::string hostname, command, gpumon_version, driver_version, simulated_scenario;
  std::optional<std::int64_t> start_ms, end_ms;  ///< from the metadata (end: closed cleanly)
  std::optional<std::int64_t> first_sample_ms, last_sample_ms;
  std::int64_t samples = 0;  ///< GPU-samples
  TimeGrid grid;
  std::vector<GpuReport> gpus;
  std::vector<record::RecordedEvent> events;
  std::vector<record::RecordedProcess> processes;
  StepFigures steps;
  std::vector<RankSteps> ranks;  ///< per process and device: series, GPU, step axis
  /// The jobs the ranks' hellos named (job/job_identity.h's job_tag: "job 4711"), once each, in
  /// the order they connected.
  std::vector<std::string> jobs;
  /// What the OOM guard and the adaptive loader did (the `action` rank events), in time order.
  std::vector<ActionEvent> actions;
  /// The diagnosis (health score, findings); nullopt when none was made.
  std::optional<ReportDiagnosis> diagnosis;
};

/// The run's figures over every GPU (the summary table; also what a baseline is compared on).
struct RunTotals {
  std::optional<double> duration_s;
  std::size_t gpus = 0;
  std::string gpu_models;  ///< the GPUs' names, each once, sorted ("" when none is known)
  std::int64_t samples = 0;
  std::optional<double> mean_util_pct, mean_sm_active_pct, mean_power_w, max_temp_c;
  std::optional<double> peak_memory_bytes, energy_j;
  std::optional<double> throttle_share;  ///< of samples with clock event reasons, 0-1
  int xids = 0;
  int lost_gpus = 0;
  std::optional<double> steps;              ///< of the process with the most
  std::optional<double> mean_step_s;        ///< CPU-side step time, every process
  std::optional<double> data_wait_share;    ///< time blocked on the data loader / step time
  std::optional<double> energy_per_step_j;  ///< all GPUs' energy / steps
  std::optional<double> health_score;       ///< the diagnosis's, 0-100; nullopt without one
};
RunTotals run_totals(const RunReport& run);

inline constexpr std::size_t kDefaultBuckets = 1500;

/// Reads the recording at `path`; the report, or why it cannot be read (the message names the
/// file). `max_buckets` bounds each series' points.
record::ReadResult<RunReport> load_run_report(const std::string& path,
                                              std::size_t max_buckets = kDefaultBuckets);

}  // namespace gpumon::report
