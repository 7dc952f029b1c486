// SPDX-License-Identifier: MIT
#include "diagnose/live/live_metrics.h"

#include <set>

namespace gpumon::diagnose {
namespace {

// A label value as the text format wants it: \ " and newline escaped.
std::string escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

std::string diagnosis_metrics_text(const Diagnosis& d) {
  std::string out =
      "# HELP gpumon_health_score Health score of the live diagnoses (last 10 minutes): 100 "
      "minus the deductions of the active findings.\n"
      "# TYPE gpumon_health_score gauge\n"
      "gpumon_health_score " +
      std::to_string(d.health_score) +
      "\n"
      "# HELP gpumon_diagnosis_active 1 for each active finding of the live diagnoses "
      "(docs/DIAGNOSES.md), per GPU or rank it concerns.\n"
      "# TYPE gpumon_diagnosis_active gauge\n";
  std::set<std::string> series;
  for (const Finding& f : d.findings) {
    const std::string head = "gpumon_diagnosis_active{id=\"" + escape(f.id) + "\",severity=\"" +
                             std::string(severity_name(f.severity)) + "\"";
    if (!f.gpus.empty()) {
      const std::string rank =
          f.ranks.size() == 1 ? ",rank=\"" + std::to_string(f.ranks[0]) + "\"" : "";
      for (unsigned g : f.gpus)
        series.insert(head + ",gpu=\"" + std::to_string(g) + "\"" + rank + "} 1\n");
    } else if (!f.ranks.empty()) {
      for (std::int64_t r : f.ranks)
        series.insert(head + ",rank=\"" + std::to_string(r) + "\"} 1\n");
    } else {
      series.insert(head + "} 1\n");
    }
  }
  for (const auto& s : series) out += s;
  return out;
}

}  // namespace gpumon::diagnose
