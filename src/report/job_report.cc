// SPDX-License-Identifier: MIT
#include "report/job_report.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "diagnose/stats.h"
#include "record/recording_types.h"
#include "report/report_diagnosis.h"
#include "report/summary.h"
#include "report/text_escape.h"

namespace gpumon::report {
namespace {

constexpr std::size_t kMaxRankRows = 2048;
constexpr int kSparkW = 240, kSparkH = 28, kSparkPoints = 240;

std::string opt_fixed(std::optional<double> v, int decimals, const char* unit = "") {
  return v ? fixed(*v, decimals) + unit : std::string("-");
}

std::string ms(std::optional<double> s) {
  return s ? fixed(*s * 1000, 1) + " ms" : std::string("-");
}

// A node's GPUs' mean utilization over the job's span, as an inline SVG line.
std::string node_sparkline(const diagnose::RunData& combined, std::size_t node, std::int64_t t0,
                           std::int64_t t1) {
  if (t1 <= t0) return {};
  std::vector<double> sum(kSparkPoints, 0), n(kSparkPoints, 0);
  for (const auto& g : combined.gpus) {
    if (diagnose::node_gpu(g.gpu).node != node) continue;
    for (const auto& p : g.points) {
      if (!p.util_pct || p.t_ms < t0 || p.t_ms > t1) continue;
      const auto k = std::min<std::size_t>(
          kSparkPoints - 1, static_cast<std::size_t>((p.t_ms - t0) * kSparkPoints /
                                                     std::max<std::int64_t>(t1 - t0, 1)));
      sum[k] += *p.util_pct * p.samples, n[k] += p.samples;
    }
  }
  std::string line;
  bool down = false;
  for (int k = 0; k < kSparkPoints; ++k) {
    if (n[k] == 0) {
      down = false;
      continue;
    }
    const double x = double(k) * kSparkW / (kSparkPoints - 1);
    const double y = kSparkH - std::clamp(sum[k] / n[k], 0.0, 100.0) * kSparkH / 100;
    line += (down ? "L" : "M") + fixed(x, 1) + "," + fixed(y, 1);
    down = true;
  }
  if (line.empty()) return "-";
  return "<svg class=\"spark\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
         std::to_string(kSparkW) + " " + std::to_string(kSparkH) + "\" width=\"" +
         std::to_string(kSparkW) + "\" height=\"" + std::to_string(kSparkH) +
         "\" role=\"img\" aria-label=\"mean GPU utilization\"><title>mean GPU utilization of "
         "the node, 0-100 %, over the job</title><path d=\"" +
         line + "\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.2\"/></svg>";
}

std::optional<double> mean_util(const diagnose::RunData& combined, std::size_t node) {
  double sum = 0, n = 0;
  for (const auto& g : combined.gpus)
    if (diagnose::node_gpu(g.gpu).node == node)
      for (const auto& p : g.points)
        if (p.util_pct) sum += *p.util_pct * p.samples, n += p.samples;
  return n > 0 ? std::optional<double>(sum / n) : std::nullopt;
}

std::string warnings_of(const diagnose::Diagnosis& d) {
  std::string s;
  for (const auto& f : d.findings)
    if (f.severity >= diagnose::Severity::kWarning && !f.machine)
      s += (s.empty() ? "" : ", ") + f.id;
  return s.empty() ? "none" : s;
}

struct RankRow {
  const diagnose::RankInfo* info = nullptr;
  std::vector<double> step_s, gpu_s;
  double wait_s = 0, wait_step_s = 0;
  std::int64_t steps = 0, last_step = 0;
  double last_end_s = 0;
};

void write_ranks(std::string& out, const diagnose::JobRun& job) {
  std::map<std::int64_t, RankRow> rows;  // by combined pid
  for (const auto& r : job.combined.ranks)
    if (r.rank) rows[r.pid].info = &r;
  for (const auto& s : job.combined.steps) {
    auto it = rows.find(s.pid);
    if (it == rows.end() || !std::isfinite(s.cpu_step_s)) continue;
    auto& row = it->second;
    ++row.steps;
    row.step_s.push_back(s.cpu_step_s);
    if (s.gpu_step_s) row.gpu_s.push_back(*s.gpu_step_s);
    if (s.data_wait_s) row.wait_s += *s.data_wait_s, row.wait_step_s += s.cpu_step_s;
    if (s.step >= row.last_step) row.last_step = s.step, row.last_end_s = s.t_end_s;
  }
  std::vector<const RankRow*> sorted;
  for (const auto& [pid, row] : rows) sorted.push_back(&row);
  std::sort(sorted.begin(), sorted.end(),
            [](const RankRow* a, const RankRow* b) { return *a->info->rank < *b->info->rank; });
  out += "<section id=\"ranks\"><h2>Ranks</h2>\n<p class=\"note\">Times on node " +
         html_text(job.nodes[job.reference].name) +
         "'s clock (a node whose clock could not be set: as recorded). Steps as the node's read "
         "kept them (a long run keeps a uniform sample of "
         "step numbers and each rank's latest).</p>\n<table><thead><tr><th>rank</th><th>node</th>"
         "<th>GPU</th><th>steps</th><th>median step</th><th>median GPU step</th><th>data "
         "wait</th><th>last step</th><th>its end</th></tr></thead><tbody>\n";
  std::size_t shown = 0;
  for (const auto* row : sorted) {
    if (++shown > kMaxRankRows) break;
    const auto* r = row->info;
    const std::size_t node = diagnose::node_of_pid(r->pid);
    out += "<tr><td>" + std::to_string(*r->rank) + "</td><td>" +
           html_text(node < job.nodes.size() ? job.nodes[node].name : "?") + "</td><td>" +
           (r->gpu ? std::to_string(diagnose::node_gpu(*r->gpu).gpu) : std::string("-")) +
           "</td><td>" + std::to_string(row->steps) + "</td><td>" +
           ms(diagnose::median_of(row->step_s)) + "</td><td>" +
           ms(diagnose::median_of(row->gpu_s)) + "</td><td>" +
           (row->wait_step_s > 0 ? fixed(100 * row->wait_s / row->wait_step_s, 1) + " %"
                                 : std::string("-")) +
           "</td><td>" + (row->steps ? std::to_string(row->last_step) : std::string("-")) +
           "</td><td>" +
           (row->steps ? html_text(format_time(std::llround(row->last_end_s * 1000)))
                       : std::string("-")) +
           "</td></tr>\n";
  }
  out += "</tbody></table>\n";
  if (sorted.size() > kMaxRankRows)
    out += "<p class=\"note\">" + std::to_string(sorted.size() - kMaxRankRows) +
           " more ranks are in the recordings.</p>\n";
  out += "</section>\n";
}

}  // namespace

std::string render_job_report(const diagnose::JobRun& job, const diagnose::JobDiagnosis& d,
                              const ReportAsset& a) {
  std::string out;
  std::size_t ranks = 0;
  for (const auto& n : job.nodes) ranks += n.ranks.size();
  const std::string title =
      "gpumon report: job " + (job.job_id.empty() ? std::string("(no id)") : job.job_id) + ", " +
      std::to_string(job.nodes.size()) + " nodes, " + std::to_string(ranks) + " ranks";
  const auto& run = job.combined;
  out +=
      "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src "
      "'none'; style-src " +
      std::string(a.report_css_hash) +
      "; img-src data:; base-uri 'none'; form-action 'none'\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"referrer\" content=\"no-referrer\">\n<title>" +
      html_text(title) + "</title>\n<link rel=\"icon\" href=\"data:,\">\n<style>" +
      std::string(a.report_css) + "</style>\n</head>\n<body>\n<header>\n<h1>" + html_text(title) +
      "</h1>\n<p class=\"run\">" + html_text(format_time(run.start_ms)) + " to " +
      html_text(format_time(run.end_ms)) + " on node " + html_text(job.nodes[job.reference].name) +
      "'s clock" +
      (job.world_size ? " &middot; world size " + std::to_string(*job.world_size) : "") + "</p>\n";
  if (!run.simulated_scenario.empty())
    out += "<p class=\"simulated\">SIMULATED GPUs (fake NVML scenario " +
           html_text(run.simulated_scenario) + ")</p>\n";
  out += "</header>\n<main>\n<section id=\"summary\"><h2>Summary</h2>\n<p>Health score: " +
         (d.scored ? std::to_string(d.health_score) + " / 100" : std::string("n/a (no data)")) +
         " (the lowest of the nodes' and of the findings across nodes: " +
         std::to_string(d.across.health_score) +
         " / 100)</p>\n<table><thead><tr><th>node</th><th>recording</th><th>ranks</th>"
         "<th>health</th><th>warnings</th><th>clock</th><th>GPU utilization</th><th>over "
         "the job</th></tr></thead><tbody>\n";
  for (std::size_t k = 0; k < job.nodes.size(); ++k) {
    const auto& n = job.nodes[k];
    std::string clock = "reference";
    if (k != job.reference)
      clock = n.clock.applied
                  ? (n.clock.offset_s >= 0 ? "+" : "") + fixed(n.clock.offset_s * 1000, 1) +
                        " ms (spread " + fixed(n.clock.spread_s.value_or(0) * 1000, 1) + " ms, " +
                        std::to_string(n.clock.common_steps) + " steps)"
                  : "as recorded: " + n.clock.why_not;
    out += "<tr><td>" + html_text(n.name) + "</td><td><code>" + html_text(n.source) +
           "</code></td><td>" + diagnose::rank_ranges(n.ranks) + "</td><td>" +
           (n.diagnosis.scored ? std::to_string(n.diagnosis.health_score) : std::string("n/a")) +
           "</td><td>" + html_text(warnings_of(n.diagnosis)) + "</td><td>" + html_text(clock) +
           "</td><td>" + opt_fixed(mean_util(run, k), 0, " %") + "</td><td>" +
           node_sparkline(run, k, run.start_ms.value_or(0), run.end_ms.value_or(0)) +
           "</td></tr>\n";
  }
  out += "</tbody></table>\n</section>\n";
  write_findings(out, report_diagnosis(d.across), "findings", "Findings across nodes");
  write_ranks(out, job);
  for (std::size_t k = 0; k < job.nodes.size(); ++k)
    write_findings(out, report_diagnosis(job.nodes[k].diagnosis), "node-" + std::to_string(k),
                   "Node " + job.nodes[k].name + ": its own findings");
  out += "</main>\n<footer>Written by <code>gpumon report</code> from " +
         std::to_string(job.nodes.size()) +
         " recordings. Each node's charts: <code>gpumon report NODE.gpumon</code>.</footer>\n"
         "</body>\n</html>\n";
  return out;
}

}  // namespace gpumon::report
