// SPDX-License-Identifier: MIT
#include "report/report_html.h"

#include <algorithm>
#include <map>

#include "gpu/xid.h"
#include "record/recording_types.h"
#include "report/summary.h"
#include "report/text_escape.h"

namespace gpumon::report {
namespace {

constexpr std::size_t kMaxTableRows = 1000;  // events and processes shown; the rest are counted
constexpr int kSparkWidth = 600, kSparkHeight = 48;
constexpr std::size_t kSparkPoints = 300;

std::string esc(std::string_view s) {
  return html_text(s);
}

void table_rows(std::string& out, const std::vector<SummaryRow>& rows) {
  for (const auto& r : rows)
    out += "<tr><th scope=\"row\">" + esc(r.label) + "</th><td>" + esc(r.value) + "</td></tr>\n";
}

void write_summary(std::string& out, const RunReport& run) {
  out += "<section id=\"summary\"><h2>Summary</h2><table class=\"summary\">\n";
  auto rows = summary_rows(run_totals(run));
  if (run.diagnosis)
    for (auto& r : rows)
      if (r.label == "Health score") r.value = health_text(*run.diagnosis);
  table_rows(out, rows);
  out += "</table></section>\n";
}

// Each GPU index of either run: its utilization sparkline and mean here and in the baseline.
void write_gpu_pairs(std::string& out, const RunReport& run, const RunReport& base) {
  std::map<unsigned, std::pair<const GpuReport*, const GpuReport*>> pairs;
  for (const auto& g : run.gpus) pairs[g.gpu].first = &g;
  for (const auto& g : base.gpus) pairs[g.gpu].second = &g;
  out +=
      "<table class=\"pairs\"><thead><tr><th>GPU</th><th>utilization, this run</th>"
      "<th>utilization, baseline</th></tr></thead><tbody>\n";
  auto cell = [&](const GpuReport* g, const TimeGrid& grid, const char* absent) {
    if (!g) return "<td class=\"none\">" + std::string(absent) + "</td>";
    const auto mean = g->util_pct.value();
    const std::string svg = sparkline_svg(*g, grid);
    return "<td>" + (svg.empty() ? std::string("no samples") : svg) + "mean " +
           (mean ? fixed(*mean, 1) + " %" : std::string("n/a")) + "</td>";
  };
  for (const auto& [gpu, p] : pairs)
    out += "<tr><th scope=\"row\">" + std::to_string(gpu) + "</th>" +
           cell(p.first, run.grid, "not in this run") +
           cell(p.second, base.grid, "not in the baseline") + "</tr>\n";
  out += "</tbody></table>\n";
}

const char* verdict_class(Verdict v) {
  switch (v) {
    case Verdict::kBetter: return "better";
    case Verdict::kWorse: return "worse";
    case Verdict::kSame: return "same";
    case Verdict::kInfo: return "changed";
    case Verdict::kNotComparable: return "not-comparable";
    case Verdict::kMissing: return "na";
  }
  return "na";
}

void write_comparison(std::string& out, const RunReport& run, const RunReport& base) {
  out += "<section id=\"baseline\"><h2>Compared with the baseline</h2>\n<p>Baseline: <code>" +
         esc(base.path) + "</code> (" + esc(format_time(base.start_ms)) + ", " +
         esc(base.hostname) +
         ")</p>\n<table class=\"compare\"><thead><tr><th></th><th>this run</th><th>baseline</th>"
         "<th>change</th><th>verdict</th></tr></thead><tbody>\n";
  for (const auto& r : compare_runs(run_totals(run), run_totals(base))) {
    out += "<tr><th scope=\"row\">" + esc(r.label) + "</th><td>" + esc(r.run) + "</td><td>" +
           esc(r.baseline) + "</td><td>" + esc(r.change) + "</td><td class=\"verdict " +
           verdict_class(r.verdict) + "\">" + esc(verdict_text(r.verdict)) +
           (r.why.empty() ? "" : ": " + esc(r.why)) + "</td></tr>\n";
  }
  out += "</tbody></table>\n";
  write_gpu_pairs(out, run, base);
  out +=
      "<p class=\"note js-only\">Both runs below on the time since each one's first sample: "
      "this run in colour, the baseline dashed grey (interval means).</p>\n<div "
      "class=\"charts\"></div>\n";
  out +=
      "<p class=\"note\">Better or worse beyond: 2 % of mean step time, 1 percentage point "
      "of time waiting on data or throttled, 5 % of energy per step (per second of run where a "
      "run has no steps), 2 points of utilization or SM activity, 2" +
      std::string(kDegreesC) +
      ", any XID or lost "
      "GPU, 2 points of health score; duration, steps, memory and power are shown, not judged. "
      "Energy is not compared across different GPUs, and the total only between runs of the "
      "same length and steps (docs/report.md).</p></section>\n";
}

void write_gpu(std::string& out, const GpuReport& g, const TimeGrid& grid) {
  out += "<section class=\"gpu\" data-gpu=\"" + std::to_string(g.gpu) + "\"><h3>GPU " +
         std::to_string(g.gpu) + (g.name.empty() ? "" : " &middot; " + esc(g.name)) +
         (g.pci_bus_id ? " &middot; " + esc(*g.pci_bus_id) : "") +
         (g.lost ? " <span class=\"badge lost\">LOST</span>" : "") + "</h3>\n";
  std::vector<SummaryRow> rows{{"Samples", std::to_string(g.samples)}};
  auto add = [&](const char* label, const std::optional<double>& v, int d, const char* unit) {
    rows.push_back({label, v ? fixed(*v, d) + unit : "n/a"});
  };
  add("Mean utilization", g.util_pct.value(), 1, " %");
  const auto sm = g.sm_active_ratio.value();
  add("Mean SM activity", sm ? std::optional<double>(*sm * 100) : std::nullopt, 1, " %");
  std::string mem = g.peak_memory_bytes ? format_bytes_gib(*g.peak_memory_bytes) : "n/a";
  if (g.memory_total_bytes)
    mem += " of " + format_bytes_gib(static_cast<double>(*g.memory_total_bytes));
  rows.push_back({"Peak memory used", mem});
  add("Mean power", g.power_w.value(), 1, " W");
  add("Highest power", g.max_power_w, 1, " W");
  add("Highest temperature", g.max_temp_c, 0, kDegreesC);
  rows.push_back({"Energy", g.energy_j ? format_energy(*g.energy_j) +
                                             (g.energy_from_counter ? "" : " (integrated power)")
                                       : "n/a"});
  rows.push_back(
      {"Time throttled",
       g.reason_samples ? fixed(100.0 * g.throttle_samples / g.reason_samples, 1) + " %" : "n/a"});
  rows.push_back({"XID events", std::to_string(g.xids)});
  out += "<table class=\"gpu-summary\">\n";
  table_rows(out, rows);
  out += "</table>\n";
  const std::string svg = sparkline_svg(g, grid);
  out += svg.empty() ? "<p class=\"none\">No utilization samples.</p>\n" : svg;
  out += "<div class=\"charts\"></div></section>\n";
}

// Each rank's steps and the GPU its allocator memory is drawn on (or why on none).
void write_steps(std::string& out, const RunReport& run) {
  out += "<section id=\"steps\"><h2>Training steps</h2>\n";
  if (run.steps.records == 0) {
    out +=
        "<p class=\"none\">No training steps were recorded (a training script reports them "
        "with <code>import gpumon</code> under <code>gpumon record</code>: docs/python.md).</p>"
        "</section>\n";
    return;
  }
  out += "<p class=\"note\">" + std::to_string(run.steps.records) + " step reports from " +
         std::to_string(run.steps.processes) +
         " process(es). On the time axis each point is the mean of the steps that ended in that "
         "interval, the band their lowest and highest; on the step axis the same points sit at "
         "the step in progress in the middle of that interval.</p>\n"
         "<table class=\"ranks\"><thead><tr><th>process</th><th>steps</th><th>mean step</th>"
         "<th>data wait</th><th>GPU (allocator memory drawn on)</th></tr></thead><tbody>\n";
  bool unmapped_allocator = false;
  for (const auto& r : run.ranks) {
    const bool alloc = r.allocated_gib.any() || r.reserved_gib.any();
    unmapped_allocator |= alloc && !r.gpu.gpu;
    out += "<tr><td>" + esc(r.label()) + "</td><td>" + std::to_string(r.steps) + " (" +
           std::to_string(r.first_step) + "&ndash;" + std::to_string(r.last_step) + ")</td><td>" +
           esc(r.steps ? fixed(1000 * r.cpu_step_s / static_cast<double>(r.steps), 1) + " ms"
                       : "n/a") +
           "</td><td>" +
           esc(r.wait.share() ? fixed(100 * *r.wait.share(), 1) + " %" : "not measured") +
           "</td><td>" +
           (r.gpu.gpu ? "GPU " + std::to_string(*r.gpu.gpu) + " (" + esc(r.gpu.why) + ")"
                      : "unmapped: " + esc(r.gpu.why)) +
           "</td></tr>\n";
  }
  out += "</tbody></table>\n";
  if (unmapped_allocator)
    out +=
        "<p class=\"note\">The allocator memory of an unmapped process is drawn in its own "
        "chart below, on no GPU's memory chart: which GPU it used cannot be told safely.</p>\n";
  out += "<div class=\"charts\"></div>\n</section>\n";
}

// What the OOM guard and the adaptive loader did, in time order (the markers on the charts).
void write_actions(std::string& out, const RunReport& run) {
  if (run.actions.empty()) return;
  out +=
      "<h3>Training actions</h3>\n<table class=\"actions\"><thead><tr><th>time (UTC)</th>"
      "<th>process</th><th>action</th><th>step</th><th>what and why</th></tr></thead><tbody>\n";
  for (std::size_t i = 0; i < run.actions.size() && i < kMaxTableRows; ++i) {
    const auto& e = run.actions[i];
    const auto& a = e.action;
    out += "<tr><td>" + esc(record::format_iso_ms(e.time_ms)) + "</td><td>" +
           (e.rank ? "rank " + std::to_string(*e.rank) : "pid " + std::to_string(e.pid)) +
           "</td><td><code>" + esc(a.action) + "</code></td><td>" +
           (a.step ? std::to_string(*a.step) : std::string()) + "</td><td>" +
           esc(a.summary.value_or(a.reason.value_or(""))) + "</td></tr>\n";
  }
  out += "</tbody></table>\n";
  if (run.actions.size() > kMaxTableRows)
    out += "<p class=\"note\">" + std::to_string(run.actions.size() - kMaxTableRows) +
           " more actions are in the recording (gpumon export --table rank_events).</p>\n";
}

void write_events(std::string& out, const RunReport& run) {
  out += "<section id=\"events\"><h2>Events</h2>\n";
  if (run.events.empty()) {
    out += "<p class=\"none\">No XID, ECC or lost-GPU events.</p>\n";
    write_actions(out, run);
    out += "</section>\n";
    return;
  }
  out +=
      "<table class=\"events\"><thead><tr><th>time (UTC)</th><th>GPU</th><th>event</th>"
      "<th>value</th></tr></thead><tbody>\n";
  for (std::size_t i = 0; i < run.events.size() && i < kMaxTableRows; ++i) {
    const auto& e = run.events[i];
    out += "<tr><td>" + esc(record::format_iso_ms(e.time_ms)) + "</td><td>" +
           std::to_string(e.gpu) + "</td><td>" + esc(e.kind) + "</td><td>" +
           (e.kind == "xid" ? esc(describe_xid(e.value)) : "") + "</td></tr>\n";
  }
  out += "</tbody></table>\n";
  if (run.events.size() > kMaxTableRows)
    out += "<p class=\"note\">" + std::to_string(run.events.size() - kMaxTableRows) +
           " more events are in the recording (gpumon export, or sqlite3).</p>\n";
  write_actions(out, run);
  out += "</section>\n";
}

void write_processes(std::string& out, const RunReport& run) {
  out += "<section id=\"processes\"><h2>Processes</h2>\n";
  if (run.processes.empty()) {
    out += "<p class=\"none\">No compute processes were seen.</p></section>\n";
    return;
  }
  out +=
      "<table class=\"processes\"><thead><tr><th>GPU</th><th>PID</th><th>name</th><th>job</th>"
      "<th>peak GPU memory</th><th>first seen (UTC)</th><th>last seen (UTC)</th></tr></thead>"
      "<tbody>\n";
  for (std::size_t i = 0; i < run.processes.size() && i < kMaxTableRows; ++i) {
    const auto& p = run.processes[i];
    out += "<tr><td>" + std::to_string(p.gpu) + "</td><td>" + std::to_string(p.pid) + "</td><td>" +
           esc(p.name.value_or("")) + "</td><td>" +
           (p.job.empty() ? std::string("-") : esc(job::job_tag(p.job))) + "</td><td>" +
           (p.max_used_memory_bytes
                ? esc(format_bytes_gib(static_cast<double>(*p.max_used_memory_bytes)))
                : "n/a") +
           "</td><td>" + esc(record::format_iso_ms(p.first_seen_ms)) + "</td><td>" +
           esc(record::format_iso_ms(p.last_seen_ms)) + "</td></tr>\n";
  }
  out += "</tbody></table>\n";
  if (run.processes.size() > kMaxTableRows)
    out += "<p class=\"note\">" + std::to_string(run.processes.size() - kMaxTableRows) +
           " more process rows are in the recording.</p>\n";
  out += "</section>\n";
}

}  // namespace

std::string report_csp(const ReportAsset& a) {
  std::string scripts = std::string(a.report_js_hash);
  std::string styles = std::string(a.report_css_hash);
  if (a.has_charts) {
    scripts = std::string(a.uplot_js_hash) + " " + scripts;
    styles = std::string(a.uplot_css_hash) + " " + styles;
  }
  return "default-src 'none'; script-src " + scripts + "; style-src " + styles +
         "; img-src data:; base-uri 'none'; form-action 'none'";
}

std::string sparkline_svg(const GpuReport& g, const TimeGrid& grid) {
  const auto& s = g.series[static_cast<std::size_t>(Series::kUtil)];
  if (!s.any() || grid.count == 0) return {};
  const std::size_t stride = (grid.count + kSparkPoints - 1) / kSparkPoints;
  const std::size_t points = (grid.count + stride - 1) / stride;
  const double dx = points > 1 ? double(kSparkWidth) / double(points - 1) : 0;
  auto y = [](double pct) {
    return fixed(kSparkHeight - std::clamp(pct, 0.0, 100.0) * kSparkHeight / 100, 1);
  };
  std::string line, band_top, band_bottom, band;
  // The band is drawn per stretch without gaps: a polygon of the max forward, the min back.
  auto close_band = [&]() {
    if (!band_top.empty()) band += "M" + band_top.substr(1) + band_bottom + "Z";
    band_top.clear();
    band_bottom.clear();
  };
  bool pen_down = false;
  for (std::size_t p = 0; p < points; ++p) {
    BucketStats m;
    for (std::size_t i = p * stride; i < std::min(grid.count, (p + 1) * stride); ++i) {
      const auto& b = s.at(i);
      if (!b.count) continue;
      m.min = std::min(m.min, b.min), m.max = std::max(m.max, b.max);
      m.sum += b.sum, m.count += b.count;
    }
    const std::string x = fixed(double(p) * dx, 1);
    if (!m.count) {
      pen_down = false;
      close_band();
      continue;
    }
    line += (pen_down ? "L" : "M") + x + "," + y(m.sum / m.count);
    band_top += "L" + x + "," + y(m.max);
    band_bottom = "L" + x + "," + y(m.min) + band_bottom;
    pen_down = true;
  }
  close_band();
  std::string svg = "<svg class=\"spark\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
                    std::to_string(kSparkWidth) + " " + std::to_string(kSparkHeight) +
                    "\" width=\"" + std::to_string(kSparkWidth) + "\" height=\"" +
                    std::to_string(kSparkHeight) + "\" role=\"img\" aria-label=\"GPU " +
                    std::to_string(g.gpu) + " utilization\"><title>GPU " + std::to_string(g.gpu) +
                    " utilization, 0-100 %</title>";
  const double span_ms = double(grid.width_ms) * double(grid.count);
  auto rects = [&](const std::vector<Interval>& list, const char* colour) {
    for (const auto& iv : list) {
      const double x0 = double(iv.start_ms - grid.start_ms) / span_ms * kSparkWidth;
      const double w = std::max(1.0, double(iv.end_ms - iv.start_ms) / span_ms * kSparkWidth);
      svg += "<rect x=\"" + fixed(x0, 1) + "\" y=\"0\" width=\"" + fixed(w, 1) + "\" height=\"" +
             std::to_string(kSparkHeight) + "\" fill=\"" + colour + "\" fill-opacity=\"0.25\"/>";
    }
  };
  rects(g.throttled, "#e8890c");
  rects(g.lost_intervals, "#d62728");
  if (!band.empty()) svg += "<path d=\"" + band + "\" fill=\"#1f77b4\" fill-opacity=\"0.2\"/>";
  svg += "<path d=\"" + line + "\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.2\"/></svg>\n";
  return svg;
}

std::string render_report(const RunReport& run, const RunReport* baseline, const ReportAsset& a) {
  std::string out;
  out.reserve(256 * 1024);
  const std::string title = "gpumon report: " + (run.hostname.empty() ? run.path : run.hostname) +
                            ", " + format_time(run.start_ms ? run.start_ms : run.first_sample_ms);
  out +=
      "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"" +
      report_csp(a) +
      "\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"referrer\" content=\"no-referrer\">\n<title>" +
      esc(title) + "</title>\n<link rel=\"icon\" href=\"data:,\">\n";
  if (a.has_charts) out += "<style>" + std::string(a.uplot_css) + "</style>\n";
  out += "<style>" + std::string(a.report_css) + "</style>\n</head>\n<body>\n<header>\n<h1>" +
         esc(title) + "</h1>\n<p class=\"run\">" + esc(format_time(run.start_ms)) + " to " +
         esc(run.end_ms ? format_time(run.end_ms)
                        : "(not closed: " + format_time(run.last_sample_ms) + ")") +
         " &middot; recorded by gpumon " + esc(run.gpumon_version) + " &middot; driver " +
         esc(run.driver_version) + "</p>\n";
  if (!run.command.empty())
    out += "<p class=\"run\">Command: <code>" + esc(run.command) + "</code></p>\n";
  if (!run.jobs.empty()) {
    std::string jobs;
    for (const std::string& j : run.jobs) jobs += (jobs.empty() ? "" : ", ") + esc(j);
    out += "<p class=\"run\">Ranks of " + jobs + "</p>\n";
  }
  if (!run.simulated_scenario.empty())
    out += "<p class=\"simulated\">SIMULATED GPUs (fake NVML scenario " +
           esc(run.simulated_scenario) + ")</p>\n";
  out += "</header>\n<main>\n";
  write_summary(out, run);
  if (baseline) write_comparison(out, run, *baseline);
  if (run.diagnosis) {
    write_findings(out, *run.diagnosis);
  } else {
    out +=
        "<section id=\"findings\"><h2>Findings</h2><p class=\"none\">No diagnosis was made "
        "of this run.</p></section>\n";
  }
  if (run.grid.count > 0)
    out += std::string(
               "<p class=\"toolbar js-only\">Charts: drag across one to zoom all of them; "
               "<button id=\"reset-zoom\" type=\"button\">reset zoom</button>") +
           (run.ranks.empty() ? ""
                              : " &middot; x axis: <button id=\"axis-toggle\" type=\"button\" "
                                "aria-pressed=\"false\">show steps</button> <span "
                                "id=\"axis-name\">time (UTC)</span>") +
           "</p>\n";
  write_steps(out, run);
  out += "<section id=\"gpus\"><h2>GPUs</h2>\n";
  if (run.gpus.empty()) out += "<p class=\"none\">The recording lists no GPU.</p>\n";
  if (run.grid.count == 0 && !run.gpus.empty())
    out += "<p class=\"none\">No samples were recorded.</p>\n";
  if (run.grid.count > 0)
    out += "<p class=\"note\">Each point is one interval of " +
           esc(fixed(run.grid.width_ms / 1000.0, 1)) +
           " s: a line is its mean, the shaded band its lowest and highest sample. Orange: "
           "throttled; red: lost or XID.</p>\n";
  for (const auto& g : run.gpus) write_gpu(out, g, run.grid);
  out += "</section>\n";
  write_events(out, run);
  write_processes(out, run);
  out +=
      "</main>\n<footer>Written by <code>gpumon report</code>. Charts: uPlot (MIT licence, "
      "notice in the page source).</footer>\n<script type=\"application/json\" "
      "id=\"report-data\">" +
      report_json(run, baseline) + "</script>\n";
  if (a.has_charts) out += "<script>" + std::string(a.uplot_js) + "</script>\n";
  out += "<script>" + std::string(a.report_js) + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace gpumon::report
