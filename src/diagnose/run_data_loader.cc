// SPDX-License-Identifier: MIT
#include "diagnose/run_data_loader.h"

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <map>

#include "gpu/metric_catalog.h"
#include "record/quantize.h"

namespace gpumon::diagnose {
namespace {

// Per GPU state across its chunks (they come in time order).
struct GpuLoad {
  std::int64_t total = 0;  // samples of the GPU in the recording
  std::int64_t seen = 0;   // samples read so far
  std::int64_t first_ms = 0, raw_from_ms = 0, width_ms = 1;
  std::int64_t bucket = -1;  // index of the open bucket
  PointMerger acc;
};

// The samples of `chunk` as raw points, column by column (one pass per metric, not per tick).
void chunk_points(const record::ChunkData& chunk,
                  const std::vector<std::optional<record::RecordedMetric>>& metrics,
                  std::vector<GpuPoint>& pts) {
  const std::size_t n = chunk.time_ms.size();
  pts.assign(n, GpuPoint{});
  for (std::size_t i = 0; i < n; ++i) pts[i].t_ms = chunk.time_ms[i];
  for (const auto& col : chunk.columns) {
    if (col.metric >= kMetricCount || col.metric >= metrics.size() || !metrics[col.metric])
      continue;
    const double q = metrics[col.metric]->quantum;
    const PointSetter set = point_setter(static_cast<MetricId>(col.metric));
    if (set == nullptr) continue;
    for (std::size_t i = 0; i < n; ++i)
      if (col.present[i]) set(pts[i], record::dequantize(col.values[i], q));
  }
}

template <typename T>
T take(record::ReadResult<T>&& r, std::string& error) {
  if (auto* e = std::get_if<std::string>(&r)) {
    error = *e;
    return T{};
  }
  return std::get<T>(std::move(r));
}

// The steps, thinned past limits.max_steps (run_data_loader.h says how).
record::ReadResult<std::vector<training::Step>> load_steps(const record::RecordingReader& reader,
                                                           const LoadLimits& limits) {
  std::vector<training::Step> kept;
  std::map<std::int64_t, std::deque<training::Step>> tails;  // by pid
  std::int64_t k = 1;
  const std::size_t max = std::max<std::size_t>(limits.max_steps, 1);
  auto n = reader.for_each_step([&](training::Step&& s) {
    if (limits.tail_steps > 0) {
      auto& tail = tails[s.pid];
      tail.push_back(s);
      if (tail.size() > limits.tail_steps) tail.pop_front();
    }
    if (s.step % k != 0) return;
    kept.push_back(std::move(s));
    if (kept.size() <= max) return;
    k *= 2;
    std::erase_if(kept, [&](const training::Step& x) { return x.step % k != 0; });
  });
  if (auto* e = std::get_if<std::string>(&n)) return *e;
  if (k == 1) return kept;  // nothing thinned: every step is in `kept` already
  for (auto& [pid, tail] : tails)
    for (auto& s : tail)
      if (s.step % k != 0) kept.push_back(std::move(s));  // the multiples of k are kept already
  std::stable_sort(kept.begin(), kept.end(),
                   [](const auto& a, const auto& b) { return a.t_end_s < b.t_end_s; });
  return kept;
}

record::ReadResult<std::vector<training::ProcessSample>> load_process_samples(
    const record::RecordingReader& reader, const LoadLimits& limits) {
  std::vector<training::ProcessSample> kept;
  std::int64_t k = 1;
  const std::size_t max = std::max<std::size_t>(limits.max_process_samples, 1);
  const auto second = [](const training::ProcessSample& s) { return s.time_ms / 1000; };
  auto n = reader.for_each_process_sample([&](training::ProcessSample&& s) {
    if (second(s) % k != 0) return;
    kept.push_back(s);
    if (kept.size() <= max) return;
    k *= 2;
    std::erase_if(kept, [&](const training::ProcessSample& x) { return second(x) % k != 0; });
  });
  if (auto* e = std::get_if<std::string>(&n)) return *e;
  return kept;
}

}  // namespace

record::ReadResult<RunData> load_run_data(const std::string& path, const LoadLimits& limits) {
  std::string error;
  auto reader = record::RecordingReader::open(path, error);
  if (!reader) return error;
  RunData run;
  run.source = path;
  run.hostname = reader->meta("hostname").value_or("");
  run.simulated_scenario = reader->meta("simulated_scenario").value_or("");
  run.kind =
      reader->meta("end_time") ? RunData::Kind::kRecording : RunData::Kind::kRecordingCutShort;
  run.read_warning = reader->warning();
  if (const auto status = reader->meta("command_exit_status")) {
    CommandEnd end;
    end.exit_status = std::atoi(status->c_str());
    end.signal = reader->meta("command_signal").value_or("");
    if (const auto kills = reader->meta("command_oom_kills"))
      end.oom_kills = std::strtoull(kills->c_str(), nullptr, 10);
    run.command_end = end;
  }
  std::map<unsigned, std::size_t> slot;
  auto series = [&](unsigned gpu) -> GpuSeries& {
    auto [it, added] = slot.try_emplace(gpu, run.gpus.size());
    if (added) run.gpus.emplace_back().gpu = gpu;
    return run.gpus[it->second];
  };
  for (const auto& d : reader->devices()) {
    auto& g = series(d.index);
    g.name = d.name, g.uuid = d.uuid, g.pci_bus_id = d.pci_bus_id;
    if (d.memory_total_bytes) g.memory_total_bytes = static_cast<double>(*d.memory_total_bytes);
    if (d.max_sm_clock_mhz) g.max_sm_clock_mhz = static_cast<double>(*d.max_sm_clock_mhz);
  }

  auto refs = take(reader->chunks(std::nullopt), error);
  if (!error.empty()) return path + ": " + error;
  std::map<unsigned, GpuLoad> load;
  for (const auto& r : refs) {
    auto [it, added] = load.try_emplace(r.gpu);
    if (added) it->second.first_ms = r.first_time_ms;
    it->second.total += r.ticks;
  }
  // The time the raw window starts is only known once a GPU's chunks are read; buckets use the
  // span up to the start of the chunk holding the first raw sample (an upper bound of it).
  {
    std::map<unsigned, std::int64_t> before;
    for (const auto& r : refs) {
      auto& l = load[r.gpu];
      const std::int64_t skip = l.total - static_cast<std::int64_t>(limits.max_raw_points);
      if (before[r.gpu] <= skip && before[r.gpu] + r.ticks > skip) l.raw_from_ms = r.last_time_ms;
      before[r.gpu] += r.ticks;
    }
    for (auto& [gpu, l] : load) {
      const auto span = std::max<std::int64_t>(l.raw_from_ms - l.first_ms, 1);
      l.width_ms = std::max<std::int64_t>(
          1, (span + static_cast<std::int64_t>(limits.max_buckets) - 1) /
                 static_cast<std::int64_t>(std::max<std::size_t>(limits.max_buckets, 1)));
    }
  }
  const auto& metrics = reader->metrics();
  std::vector<GpuPoint> pts;
  for (const auto& ref : refs) {
    auto chunk = take(reader->read_chunk(ref), error);
    if (!error.empty()) return path + ": " + error;
    auto& g = series(ref.gpu);
    auto& l = load[ref.gpu];
    const std::int64_t skip = l.total - static_cast<std::int64_t>(limits.max_raw_points);
    chunk_points(chunk, metrics, pts);
    for (auto& p : pts) {
      ++l.seen;
      if (l.seen > skip) {
        if (l.acc.open()) g.points.push_back(l.acc.finish());
        g.points.push_back(std::move(p));
        continue;
      }
      const std::int64_t b = (p.t_ms - l.first_ms) / l.width_ms;
      if (b != l.bucket && l.acc.open()) g.points.push_back(l.acc.finish());
      l.bucket = b;
      l.acc.add(p, g.max_sm_clock_mhz);
    }
  }
  for (auto& [gpu, l] : load)
    if (l.acc.open()) series(gpu).points.push_back(l.acc.finish());

  run.events = take(reader->events(), error);
  if (error.empty()) run.processes = take(reader->processes(), error);
  if (error.empty()) run.steps = take(load_steps(*reader, limits), error);
  if (error.empty()) run.rank_events = take(reader->rank_events(), error);
  if (error.empty()) run.process_samples = take(load_process_samples(*reader, limits), error);
  if (!error.empty()) return path + ": " + error;
  for (const auto& e : run.events) series(e.gpu);
  finish_run_data(run);
  return run;
}

}  // namespace gpumon::diagnose
