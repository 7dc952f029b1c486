// SPDX-License-Identifier: MIT
#include "report/run_report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "gpu/throttle.h"
#include "job/job_identity.h"
#include "record/quantize.h"

namespace gpumon::report {
namespace {

using M = MetricId;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// clang-format off
constexpr std::array<SeriesInfo, kSeriesCount> kSeries{{
  {Series::kUtil, M::kUtilizationGpuPct, "util", 1, 1},
  {Series::kSmActive, M::kSmActiveRatio, "sm", 100, 1},
  {Series::kMemUsed, M::kMemoryUsedBytes, "mem", 1 / kGiB, 2},
  {Series::kPower, M::kPowerDrawW, "power", 1, 1},
  {Series::kTemp, M::kTemperatureGpuC, "temp", 1, 1},
  {Series::kSmClock, M::kSmClockMhz, "smclk", 1, 0},
  {Series::kMemClock, M::kMemClockMhz, "memclk", 1, 0},
}};
// clang-format on

// A gap longer than this ends an interval (throttling, lost) and an energy integration step.
constexpr std::int64_t kMaxStepMs = 5000;

// Builds intervals from samples in time order; intervals closer than `merge_ms` are joined so
// that their number stays near the number of buckets.
class IntervalTracker {
 public:
  explicit IntervalTracker(std::int64_t merge_ms) : merge_ms_(merge_ms) {}
  void add(std::int64_t t, bool on, std::vector<Interval>& out) {
    if (!on) {
      open_ = false;
      return;
    }
    if (open_ && t - out.back().end_ms <= kMaxStepMs) {
      out.back().end_ms = t;
    } else if (!out.empty() && t - out.back().end_ms <= merge_ms_) {
      out.back().end_ms = t;
    } else {
      out.push_back({t, t});
    }
    open_ = true;
  }

 private:
  std::int64_t merge_ms_;
  bool open_ = false;
};

// A GPU's energy: the energy counter's forward steps, and power integrated over time for what
// the counter does not cover (before its first reading, after its last, across a counter that
// went back). `integrated_j` runs over the whole GPU; the counter's readings note where it stood.
struct EnergyState {
  std::optional<std::int64_t> first_power_ms, last_power_ms;
  double first_power_w = 0, last_power_w = 0;
  double integrated_j = 0;
  std::optional<double> last_counter_j;
  double integrated_at_first_counter_j = 0, integrated_at_last_counter_j = 0;
  double counter_j = 0;  // forward steps, plus power over the steps the counter went back
  int counter_steps = 0;

  void add_power(std::int64_t t_ms, double w) {
    if (last_power_ms && t_ms - *last_power_ms <= kMaxStepMs)
      integrated_j += last_power_w * static_cast<double>(t_ms - *last_power_ms) / 1000;
    if (!first_power_ms) first_power_ms = t_ms, first_power_w = w;
    last_power_ms = t_ms;
    last_power_w = w;
  }
  void add_counter(double j) {
    if (!last_counter_j) {
      integrated_at_first_counter_j = integrated_j;
    } else {
      // A counter that goes back (driver reload) restarted: power measures that step.
      counter_j +=
          j >= *last_counter_j ? j - *last_counter_j : integrated_j - integrated_at_last_counter_j;
      ++counter_steps;
    }
    last_counter_j = j;
    integrated_at_last_counter_j = integrated_j;
  }
  /// The counter's span with power at both edges; power alone without two counter readings.
  std::optional<double> energy_j(std::int64_t power_samples) const {
    if (counter_steps > 0)
      return integrated_at_first_counter_j + counter_j +
             (integrated_j - integrated_at_last_counter_j);
    if (power_samples > 1) return integrated_j;
    return std::nullopt;
  }
  /// The run's own edges, from its start to the first power reading and from the last reading
  /// to its end (the recording opens before the first tick and closes after the last), at the
  /// nearest reading: when no longer than one integration step, and not while the GPU was lost.
  double run_edges_j(std::optional<std::int64_t> start_ms, std::optional<std::int64_t> end_ms,
                     const std::vector<Interval>& lost) const {
    if (!first_power_ms) return 0;
    double j = 0;
    const bool lost_first = !lost.empty() && lost.front().start_ms <= *first_power_ms;
    const bool lost_last = !lost.empty() && lost.back().end_ms >= *last_power_ms;
    if (start_ms && !lost_first && *first_power_ms > *start_ms &&
        *first_power_ms - *start_ms <= kMaxStepMs)
      j += first_power_w * static_cast<double>(*first_power_ms - *start_ms) / 1000;
    if (end_ms && !lost_last && *end_ms > *last_power_ms && *end_ms - *last_power_ms <= kMaxStepMs)
      j += last_power_w * static_cast<double>(*end_ms - *last_power_ms) / 1000;
    return j;
  }
};

// Per GPU state that crosses chunk boundaries (chunks come in time order per GPU).
struct GpuState {
  EnergyState energy;
  IntervalTracker throttle{0}, lost{0};
};

// A chunk's column that another one is read beside (the SM clock beside the clock event
// reasons, power beside the energy counter); absent when the chunk has none.
struct Column {
  const record::ChunkColumn* col = nullptr;
  double quantum = 1;
  std::optional<double> at(std::size_t i) const {
    if (col == nullptr || !col->present[i]) return std::nullopt;
    return record::dequantize(col->values[i], quantum);
  }
};

// Power and the energy counter row by row, in time order: where each counter reading falls in
// the power integral.
void add_energy(const std::vector<std::int64_t>& t, const Column& power, const Column& counter,
                EnergyState& s) {
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (const auto w = power.at(i)) s.add_power(t[i], *w);
    if (const auto j = counter.at(i)) s.add_counter(*j);
  }
}

void add_column(const record::ChunkColumn& col, double quantum, const std::vector<std::int64_t>& t,
                const std::vector<std::size_t>& bucket, const Column& sm_clock,
                const std::optional<double>& max_sm_clock_mhz, GpuReport& g, GpuState& s) {
  const auto id = static_cast<M>(col.metric);
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!col.present[i]) continue;
    const double v = record::dequantize(col.values[i], quantum);
    for (const auto& info : kSeries) {
      if (info.source != id) continue;
      const auto k = static_cast<std::size_t>(info.id);
      g.series[k].add(bucket[i], v * info.scale);
      auto& timing = g.timing[k];
      if (timing.count++ == 0) timing.first_ms = t[i];
      timing.last_ms = t[i];
    }
    switch (id) {
      case M::kUtilizationGpuPct: g.util_pct.add(v); break;
      case M::kSmActiveRatio: g.sm_active_ratio.add(v); break;
      case M::kMemoryUsedBytes:
        g.peak_memory_bytes = std::max(g.peak_memory_bytes.value_or(v), v);
        break;
      case M::kTemperatureGpuC:
        g.temp_c.add(v);
        g.max_temp_c = std::max(g.max_temp_c.value_or(v), v);
        break;
      case M::kPowerDrawW:
        g.power_w.add(v);
        g.max_power_w = std::max(g.max_power_w.value_or(v), v);
        break;
      case M::kClockEventReasons: {
        ++g.reason_samples;
        const auto reasons = static_cast<std::uint64_t>(col.values[i]);
        const bool throttled = throttle_causes(reasons, sm_clock.at(i), max_sm_clock_mhz).any();
        if (throttled) ++g.throttle_samples;
        s.throttle.add(t[i], throttled, g.throttled);
        break;
      }
      case M::kLost:
        if (v != 0) g.lost = true;
        s.lost.add(t[i], v != 0, g.lost_intervals);
        break;
      default: break;
    }
  }
}

std::string meta_or_empty(const record::RecordingReader& r, const char* key) {
  return r.meta(key).value_or("");
}

std::optional<std::int64_t> meta_ms(const record::RecordingReader& r, const char* key) {
  const auto v = r.meta(key);
  if (!v || v->empty()) return std::nullopt;
  char* end = nullptr;
  const long long ms = std::strtoll(v->c_str(), &end, 10);
  if (*end != '\0') return std::nullopt;
  return ms;
}

// Step figures; per rank series on the run's grid (a step is placed at its end).
std::string add_steps(const record::RecordingReader& reader, RunReport& run) {
  auto steps_or = reader.steps();
  if (auto* e = std::get_if<std::string>(&steps_or)) return *e;
  const auto& steps = std::get<std::vector<training::Step>>(steps_or);
  auto hellos_or = reader.rank_events();
  if (auto* e = std::get_if<std::string>(&hellos_or)) return *e;
  const auto& rank_events = std::get<std::vector<training::RankEvent>>(hellos_or);
  run.ranks = rank_steps(steps, rank_events, reader.devices(), run.processes, run.grid);
  run.actions = action_events(rank_events);
  for (const training::RankEvent& e : rank_events) {
    if (!e.hello) continue;
    if (std::string tag = job::job_tag(e.hello->job);
        !tag.empty() && std::find(run.jobs.begin(), run.jobs.end(), tag) == run.jobs.end())
      run.jobs.push_back(std::move(tag));
  }
  add_actions(run.ranks, run.actions, run.grid);
  // Host memory per rank, from the process samples one at a time (a long run has millions).
  std::map<std::int64_t, std::vector<std::size_t>> ranks_of_pid;
  for (std::size_t i = 0; i < run.ranks.size(); ++i) {
    run.ranks[i].host_gib = BucketSeries(run.grid.count);
    ranks_of_pid[run.ranks[i].pid].push_back(i);
  }
  const std::int64_t grid_end =
      run.grid.start_ms + run.grid.width_ms * static_cast<std::int64_t>(run.grid.count);
  auto samples_or = reader.for_each_process_sample([&](training::ProcessSample&& s) {
    const auto pss = s.total_pss_bytes();
    const auto it = ranks_of_pid.find(s.pid);
    if (!pss || it == ranks_of_pid.end() || run.grid.count == 0 || s.time_ms < run.grid.start_ms ||
        s.time_ms >= grid_end)
      return;
    for (const std::size_t i : it->second)
      run.ranks[i].host_gib.add(run.grid.bucket(s.time_ms),
                                static_cast<double>(*pss) / (1024.0 * 1024.0 * 1024.0));
  });
  if (auto* e = std::get_if<std::string>(&samples_or)) return *e;
  auto& f = run.steps;
  for (const auto& r : run.ranks) {
    f.records += r.steps;
    f.cpu_step_s += r.cpu_step_s;
    f.wait.add(r.wait);
  }
  std::map<std::int64_t, std::int64_t> per_pid;
  for (const auto& r : run.ranks) f.steps = std::max(f.steps, per_pid[r.pid] += r.steps);
  f.processes = static_cast<std::int64_t>(per_pid.size());
  return {};
}

}  // namespace

const SeriesInfo& series_info(Series s) {
  return kSeries[static_cast<std::size_t>(s)];
}

record::ReadResult<RunReport> load_run_report(const std::string& path, std::size_t max_buckets) {
  std::string error;
  auto reader = record::RecordingReader::open(path, error);
  if (!reader) return error;
  RunReport run;
  run.path = path;
  run.hostname = meta_or_empty(*reader, "hostname");
  run.command = meta_or_empty(*reader, "command");
  run.gpumon_version = meta_or_empty(*reader, "gpumon_version");
  run.driver_version = meta_or_empty(*reader, "driver_version");
  run.simulated_scenario = meta_or_empty(*reader, "simulated_scenario");
  run.start_ms = meta_ms(*reader, "start_time_ms");
  run.end_ms = meta_ms(*reader, "end_time_ms");

  auto refs_or = reader->chunks(std::nullopt);
  if (auto* e = std::get_if<std::string>(&refs_or)) return path + ": " + *e;
  const auto& refs = std::get<std::vector<record::ChunkRef>>(refs_or);
  std::map<unsigned, std::int64_t> ticks;
  for (const auto& r : refs) {
    ticks[r.gpu] += r.ticks;
    run.first_sample_ms = std::min(run.first_sample_ms.value_or(r.first_time_ms), r.first_time_ms);
    run.last_sample_ms = std::max(run.last_sample_ms.value_or(r.last_time_ms), r.last_time_ms);
  }
  // The typical interval: that of the GPU sampled most often, over the whole run.
  std::int64_t most = 0;
  for (const auto& [gpu, n] : ticks) most = std::max(most, n);
  if (run.first_sample_ms) {
    const std::int64_t span = *run.last_sample_ms - *run.first_sample_ms;
    run.grid = make_grid(*run.first_sample_ms, *run.last_sample_ms,
                         most > 1 ? span / (most - 1) : 0, max_buckets);
  }

  std::map<unsigned, std::size_t> slot;
  auto gpu_slot = [&](unsigned gpu) -> GpuReport& {
    auto [it, added] = slot.try_emplace(gpu, run.gpus.size());
    if (added) {
      run.gpus.emplace_back();
      run.gpus.back().gpu = gpu;
      for (auto& s : run.gpus.back().series) s = BucketSeries(run.grid.count);
    }
    return run.gpus[it->second];
  };
  std::map<unsigned, std::optional<double>> max_sm_clock;
  for (const auto& d : reader->devices()) {
    auto& g = gpu_slot(d.index);
    g.name = d.name.value_or("");
    g.pci_bus_id = d.pci_bus_id;
    g.memory_total_bytes = d.memory_total_bytes;
    if (d.max_sm_clock_mhz) max_sm_clock[d.index] = static_cast<double>(*d.max_sm_clock_mhz);
  }

  std::map<unsigned, GpuState> states;
  const auto& metrics = reader->metrics();
  std::vector<std::size_t> bucket;
  for (const auto& ref : refs) {
    auto decoded = reader->read_chunk(ref);
    if (auto* e = std::get_if<std::string>(&decoded)) return path + ": " + *e;
    const auto& chunk = std::get<record::ChunkData>(decoded);
    auto& g = gpu_slot(ref.gpu);
    auto [st, fresh] = states.try_emplace(ref.gpu);
    if (fresh) st->second.throttle = st->second.lost = IntervalTracker(run.grid.width_ms);
    bucket.resize(chunk.time_ms.size());
    for (std::size_t i = 0; i < bucket.size(); ++i) bucket[i] = run.grid.bucket(chunk.time_ms[i]);
    g.samples += static_cast<std::int64_t>(chunk.time_ms.size());
    run.samples += static_cast<std::int64_t>(chunk.time_ms.size());
    auto known = [&](const record::ChunkColumn& col) {
      return col.metric < kMetricCount && col.metric < metrics.size() && metrics[col.metric];
    };
    Column sm_clock, power, counter;
    for (const auto& col : chunk.columns) {
      if (!known(col)) continue;
      const Column c{&col, metrics[col.metric]->quantum};
      switch (static_cast<M>(col.metric)) {
        case M::kSmClockMhz: sm_clock = c; break;
        case M::kPowerDrawW: power = c; break;
        case M::kEnergyJ: counter = c; break;
        default: break;
      }
    }
    add_energy(chunk.time_ms, power, counter, st->second.energy);
    for (const auto& col : chunk.columns) {
      if (!known(col)) continue;  // a metric of a newer gpumon
      add_column(col, metrics[col.metric]->quantum, chunk.time_ms, bucket, sm_clock,
                 max_sm_clock[ref.gpu], g, st->second);
    }
  }
  for (auto& [gpu, s] : states) {
    auto& g = gpu_slot(gpu);
    g.energy_j = s.energy.energy_j(g.power_w.n);
    if (g.energy_j) *g.energy_j += s.energy.run_edges_j(run.start_ms, run.end_ms, g.lost_intervals);
    g.energy_from_counter = s.energy.counter_steps > 0;
  }

  auto events = reader->events();
  if (auto* e = std::get_if<std::string>(&events)) return path + ": " + *e;
  run.events = std::get<std::vector<record::RecordedEvent>>(std::move(events));
  for (const auto& e : run.events) {
    auto& g = gpu_slot(e.gpu);
    if (e.kind == "xid") ++g.xids;
    if (e.kind == "lost") g.lost = true;
  }
  auto processes = reader->processes();
  if (auto* e = std::get_if<std::string>(&processes)) return path + ": " + *e;
  run.processes = std::get<std::vector<record::RecordedProcess>>(std::move(processes));
  if (auto e = add_steps(*reader, run); !e.empty()) return path + ": " + e;
  std::sort(run.gpus.begin(), run.gpus.end(),
            [](const GpuReport& a, const GpuReport& b) { return a.gpu < b.gpu; });
  return run;
}

RunTotals run_totals(const RunReport& run) {
  RunTotals t;
  // From start to end as stored, when that spans the samples (a killed run has no end).
  const bool spans = run.start_ms && run.end_ms &&
                     (!run.first_sample_ms || (*run.start_ms <= *run.first_sample_ms &&
                                               *run.end_ms >= *run.last_sample_ms));
  if (spans) {
    t.duration_s = static_cast<double>(*run.end_ms - *run.start_ms) / 1000;
  } else if (run.first_sample_ms) {
    t.duration_s = static_cast<double>(*run.last_sample_ms - *run.first_sample_ms) / 1000;
  }
  t.gpus = run.gpus.size();
  std::set<std::string> models;
  for (const auto& g : run.gpus) models.insert(g.name.empty() ? "unknown" : g.name);
  for (const auto& m : models) t.gpu_models += (t.gpu_models.empty() ? "" : ", ") + m;
  t.samples = run.samples;
  Mean util, sm, power;
  std::int64_t reasons = 0, throttled = 0;
  for (const auto& g : run.gpus) {
    util.sum += g.util_pct.sum, util.n += g.util_pct.n;
    sm.sum += g.sm_active_ratio.sum * 100, sm.n += g.sm_active_ratio.n;
    power.sum += g.power_w.sum, power.n += g.power_w.n;
    if (g.max_temp_c) t.max_temp_c = std::max(t.max_temp_c.value_or(*g.max_temp_c), *g.max_temp_c);
    if (g.peak_memory_bytes)
      t.peak_memory_bytes = std::max(t.peak_memory_bytes.value_or(0), *g.peak_memory_bytes);
    if (g.energy_j) t.energy_j = t.energy_j.value_or(0) + *g.energy_j;
    reasons += g.reason_samples;
    throttled += g.throttle_samples;
    t.xids += g.xids;
    t.lost_gpus += g.lost ? 1 : 0;
  }
  t.mean_util_pct = util.value();
  t.mean_sm_active_pct = sm.value();
  t.mean_power_w = power.value();
  if (run.steps.records > 0) {
    t.steps = static_cast<double>(run.steps.steps);
    t.mean_step_s = run.steps.cpu_step_s / static_cast<double>(run.steps.records);
    t.data_wait_share = run.steps.wait.share();
    if (t.energy_j && run.steps.steps > 0) t.energy_per_step_j = *t.energy_j / *t.steps;
  }
  if (run.diagnosis && run.diagnosis->scored) t.health_score = run.diagnosis->health_score;
  if (reasons > 0) t.throttle_share = static_cast<double>(throttled) / static_cast<double>(reasons);
  return t;
}

}  // namespace gpumon::report
