// SPDX-License-Identifier: MIT
#include "report/report_findings.h"

#include "record/recording_types.h"
#include "report/summary.h"
#include "report/text_escape.h"

namespace gpumon::report {
namespace {

template <typename T>
std::string join(const std::vector<T>& list) {
  std::string s;
  for (const auto& v : list) s += (s.empty() ? "" : ", ") + std::to_string(v);
  return s;
}

template <typename T>
void append_ints(std::string& out, const std::vector<T>& list) {
  out += '[';
  for (std::size_t i = 0; i < list.size(); ++i) out += (i ? "," : "") + std::to_string(list[i]);
  out += ']';
}

}  // namespace

std::string health_text(const ReportDiagnosis& d) {
  if (!d.scored) return "n/a (no data)";
  std::string s = std::to_string(d.health_score) + " / 100";
  if (d.deductions.empty()) return s + " (no deductions)";
  s += " (";
  for (std::size_t i = 0; i < d.deductions.size(); ++i)
    s += (i ? ", -" : "-") + std::to_string(d.deductions[i].points) + " " + d.deductions[i].finding;
  return s + ")";
}

namespace {

// The checks that could not run: the score does not cover them.
void write_not_judged(std::string& out, const ReportDiagnosis& d, const std::string& id) {
  if (d.not_judged.empty()) return;
  out += "<div id=\"" + html_text(id) +
         "\"><h3>Not judged</h3><p class=\"note\">The health score does not "
         "cover these checks: they could not run.</p><ul>";
  for (const auto& [check, reason] : d.not_judged)
    out += "<li><code>" + html_text(check) + "</code>: " + html_text(reason) + "</li>";
  out += "</ul></div>\n";
}

}  // namespace

void write_findings(std::string& out, const ReportDiagnosis& d, std::string_view id,
                    std::string_view heading) {
  const std::string not_judged_id =
      id == "findings" ? std::string("not-judged") : std::string(id) + "-not-judged";
  out += "<section id=\"" + html_text(id) + "\"><h2>" + html_text(heading) + "</h2>\n";
  if (d.findings.empty()) {
    out += "<p class=\"none\">The diagnosis found nothing wrong.</p>\n";
    write_not_judged(out, d, not_judged_id);
    out += "</section>\n";
    return;
  }
  if (!d.deductions.empty()) {
    out += "<p class=\"note\">Health score " + html_text(std::to_string(d.health_score)) +
           " / 100: 100";
    for (const auto& x : d.deductions)
      out += " &minus; " + std::to_string(x.points) + " (" + html_text(x.reason) + ")";
    out += ".</p>\n";
  }
  for (const auto& f : d.findings) {
    out += "<article class=\"finding " + html_text(f.severity) + "\" data-id=\"" + html_text(f.id) +
           "\"><h3><span class=\"severity\">" + html_text(f.severity) + "</span> " +
           html_text(f.title) + "</h3>\n<p>" + html_text(f.summary) + "</p>\n<p class=\"note\">";
    if (f.machine)
      out += "the machine, not this run (no rank of the run uses these GPUs) &middot; ";
    out += "confidence " + fixed(100 * f.confidence, 0) + " %";
    if (f.deduction) out += " &middot; &minus;" + std::to_string(f.deduction) + " health points";
    if (f.start_ms)
      out += " &middot; " + html_text(record::format_iso_ms(*f.start_ms)) + " to " +
             html_text(f.end_ms ? record::format_iso_ms(*f.end_ms) : "the end");
    if (!f.gpus.empty()) out += " &middot; GPU " + html_text(join(f.gpus));
    if (!f.ranks.empty()) out += " &middot; rank " + html_text(join(f.ranks));
    if (!f.pids.empty()) out += " &middot; pid " + html_text(join(f.pids));
    out += "</p>\n";
    if (!f.evidence.empty()) {
      out += "<ul class=\"evidence\">";
      for (const auto& e : f.evidence)
        out += "<li data-key=\"" + html_text(e.key) + "\">" + html_text(e.words) + "</li>";
      out += "</ul>\n";
    }
    if (!f.advice.empty()) out += "<p class=\"advice\">" + html_text(f.advice) + "</p>\n";
    out += "</article>\n";
  }
  write_not_judged(out, d, not_judged_id);
  out += "</section>\n";
}

void append_findings_json(std::string& out, const ReportDiagnosis& d) {
  out += '[';
  bool first = true;
  auto seconds = [&](const std::optional<std::int64_t>& ms) {
    if (ms) {
      append_json_number(out, static_cast<double>(*ms) / 1000, 3);
    } else {
      out += "null";
    }
  };
  for (const auto& f : d.findings) {
    if (!first) out += ',';
    first = false;
    out += "{\"id\":";
    append_json_string(out, f.id);
    out += ",\"severity\":";
    append_json_string(out, f.severity);
    out += ",\"title\":";
    append_json_string(out, f.title);
    out += ",\"start\":";
    seconds(f.start_ms);
    out += ",\"end\":";
    seconds(f.start_ms ? f.end_ms.value_or(*f.start_ms) : f.end_ms);
    out += ",\"gpus\":";
    append_ints(out, f.gpus);
    out += ",\"ranks\":";
    append_ints(out, f.ranks);
    out += ",\"evidence\":{";
    for (std::size_t i = 0; i < f.evidence.size(); ++i) {
      const auto& e = f.evidence[i];
      if (i) out += ',';
      append_json_string(out, e.key);
      out += ':';
      if (e.number) {
        out += e.value;
      } else {
        append_json_string(out, e.value);
      }
    }
    out += "}}";
  }
  out += ']';
}

}  // namespace gpumon::report
