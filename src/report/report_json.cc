// SPDX-License-Identifier: MIT
// The JSON blob of the page: the grid, and per GPU each series' mean/min/max per bucket.
#include <algorithm>
#include <cmath>

#include "report/report_html.h"
#include "report/text_escape.h"

namespace gpumon::report {
namespace {

constexpr std::size_t kMaxEventMarkers = 500;  // per GPU

void append_int(std::string& out, std::int64_t v) {
  out += std::to_string(v);
}

// [[start_s, end_s], ...] with ms precision.
void append_intervals(std::string& out, const std::vector<Interval>& list) {
  out += '[';
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (i) out += ',';
    out += '[';
    append_json_number(out, static_cast<double>(list[i].start_ms) / 1000, 3);
    out += ',';
    append_json_number(out, static_cast<double>(list[i].end_ms) / 1000, 3);
    out += ']';
  }
  out += ']';
}

void append_series(std::string& out, const BucketSeries& s, int decimals, std::int64_t gap_ms) {
  static constexpr const char* kStats[] = {"mean", "min", "max"};
  out += "{\"gapMs\":";
  append_int(out, gap_ms);
  out += ',';
  for (int k = 0; k < 3; ++k) {
    if (k) out += ',';
    out += '"';
    out += kStats[k];
    out += "\":[";
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (i) out += ',';
      const auto& b = s.at(i);
      if (!b.count) {
        out += "null";
        continue;
      }
      append_json_number(out, k == 0 ? b.sum / b.count : k == 1 ? b.min : b.max, decimals);
    }
    out += ']';
  }
  out += '}';
}

// [[time_s, label], ...] of the actions of the processes `pids`, at most kMaxEventMarkers (the
// events table lists them all).
void append_action_markers(std::string& out, const std::vector<ActionEvent>& actions,
                           const std::vector<std::int64_t>& pids) {
  out += '[';
  std::size_t n = 0;
  for (const auto& a : actions) {
    if (std::find(pids.begin(), pids.end(), a.pid) == pids.end()) continue;
    if (++n > kMaxEventMarkers) break;
    if (n > 1) out += ',';
    out += '[';
    append_json_number(out, static_cast<double>(a.time_ms) / 1000, 3);
    out += ',';
    append_json_string(out, a.label());
    out += ']';
  }
  out += ']';
}

// A step function on the grid: its value per bucket (null where unknown), or null when empty.
void append_state(std::string& out, const std::vector<double>& values) {
  if (values.empty()) {
    out += "null";
    return;
  }
  out += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    if (std::isnan(values[i])) {
      out += "null";
    } else {
      append_json_number(out, values[i], 0);
    }
  }
  out += ']';
}

// A rank's series on the grid, its GPU (or why none) and its step axis.
void append_rank(std::string& out, const RankSteps& r, const TimeGrid& grid,
                 const std::vector<ActionEvent>& actions) {
  const double mean_ms = r.steps ? 1000 * r.cpu_step_s / static_cast<double>(r.steps) : 0;
  const std::int64_t gap_ms = 3 * std::max(static_cast<std::int64_t>(mean_ms), grid.width_ms);
  out += "{\"label\":";
  append_json_string(out, r.label());
  out += ",\"rank\":";
  append_int(out, r.rank.value_or(r.pid));
  out += ",\"gpu\":";
  out += r.gpu.gpu ? std::to_string(*r.gpu.gpu) : "null";
  out += ",\"map\":";
  append_json_string(out, r.gpu.why);
  out += ",\"steps\":";
  append_int(out, r.steps);
  const std::pair<const char*, const BucketSeries*> series[] = {{"time", &r.step_time_s},
                                                                {"wait", &r.data_wait_s_series},
                                                                {"alloc", &r.allocated_gib},
                                                                {"reserved", &r.reserved_gib},
                                                                {"host", &r.host_gib}};
  for (const auto& [key, s] : series) {
    out += ",\"";
    out += key;
    out += "\":";
    if (s->any()) {
      append_series(out, *s, key[0] == 'a' || key[0] == 'r' || key[0] == 'h' ? 2 : 4, gap_ms);
    } else {
      out += "null";
    }
  }
  out += ",\"actions\":";
  append_action_markers(out, actions, {r.pid});
  out += ",\"micro\":";
  append_state(out, r.micro_batch_size);
  out += ",\"workers\":";
  append_state(out, r.loader_workers);
  out += ",\"x\":[";
  for (std::size_t i = 0; i < r.step_at.size(); ++i) {
    if (i) out += ',';
    append_json_number(out, r.step_at[i], 3);
  }
  out += "]}";
}

}  // namespace

std::string report_json(const RunReport& run, const RunReport* baseline) {
  std::string out;
  out.reserve(64 * 1024);
  out += "{\"simulated\":";
  if (run.simulated_scenario.empty()) {
    out += "null";
  } else {
    append_json_string(out, run.simulated_scenario);
  }
  out += ",\"start\":";
  append_int(out, run.grid.start_ms);
  out += ",\"width\":";
  append_int(out, run.grid.width_ms);
  out += ",\"n\":";
  append_int(out, static_cast<std::int64_t>(run.grid.count));
  out += ",\"gpus\":[";
  for (std::size_t gi = 0; gi < run.gpus.size(); ++gi) {
    const auto& g = run.gpus[gi];
    if (gi) out += ',';
    out += "{\"gpu\":";
    append_int(out, g.gpu);
    out += ",\"name\":";
    append_json_string(out, g.name);
    out += ",\"samples\":";
    append_int(out, g.samples);
    out += ",\"memTotalGiB\":";
    if (g.memory_total_bytes) {
      append_json_number(out, static_cast<double>(*g.memory_total_bytes) / (1024.0 * 1024 * 1024),
                         2);
    } else {
      out += "null";
    }
    out += ",\"series\":{";
    bool first = true;
    for (std::size_t s = 0; s < kSeriesCount; ++s) {
      if (!g.series[s].any()) continue;
      const auto& info = series_info(static_cast<Series>(s));
      if (!first) out += ',';
      first = false;
      append_json_string(out, info.key);
      out += ':';
      // Empty buckets closer together than this are the metric's own sampling rate, not gaps.
      const std::int64_t gap_ms = 3 * std::max(g.timing[s].interval_ms(), run.grid.width_ms);
      append_series(out, g.series[s], info.decimals, gap_ms);
    }
    out += "},\"throttled\":";
    append_intervals(out, g.throttled);
    out += ",\"lost\":";
    append_intervals(out, g.lost_intervals);
    out += ",\"events\":[";
    bool first_event = true;
    std::size_t markers = 0;
    for (const auto& e : run.events) {
      if (e.gpu != g.gpu || e.kind.starts_with("ecc")) continue;
      if (++markers > kMaxEventMarkers) break;  // an XID storm: the events table has them all
      if (!first_event) out += ',';
      first_event = false;
      out += '[';
      append_json_number(out, static_cast<double>(e.time_ms) / 1000, 3);
      out += ',';
      append_json_string(out, e.kind == "xid"         ? "XID " + std::to_string(e.value)
                              : e.kind == "lost"      ? std::string("GPU lost")
                              : e.kind == "recovered" ? std::string("GPU recovered")
                                                      : e.kind);
      out += ']';
    }
    out += "],\"actions\":";
    std::vector<std::int64_t> pids;  // the processes that run on this GPU
    for (const auto& r : run.ranks)
      if (r.gpu.gpu == g.gpu) pids.push_back(r.pid);
    append_action_markers(out, run.actions, pids);
    out += ",\"axis\":";
    if (const auto a = axis_rank(run.ranks, g.gpu)) {
      out += "{\"rank\":" + std::to_string(a->index) +
             ",\"drives\":" + (a->drives ? "true" : "false") + '}';
    } else {
      out += "null";
    }
    out += ",\"ranks\":[";
    bool first_rank = true;
    for (std::size_t r = 0; r < run.ranks.size(); ++r) {
      if (run.ranks[r].gpu.gpu != g.gpu) continue;
      if (!first_rank) out += ',';
      first_rank = false;
      out += std::to_string(r);
    }
    out += "]}";
  }
  out += "],\"ranks\":[";
  for (std::size_t i = 0; i < run.ranks.size(); ++i) {
    if (i) out += ',';
    append_rank(out, run.ranks[i], run.grid, run.actions);
  }
  out += "],\"findings\":";
  if (run.diagnosis) {
    append_findings_json(out, *run.diagnosis);
  } else {
    out += "[]";
  }
  if (baseline) {
    out += ",\"baseline\":";
    out += report_json(*baseline);
  }
  out += '}';
  return out;
}

}  // namespace gpumon::report
