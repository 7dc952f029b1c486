// SPDX-License-Identifier: MIT
// to_json and render_text of a Diagnosis.
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "diagnose/diagnosis.h"
#include "diagnose/evidence_words.h"
#include "diagnose/rules/rules.h"

namespace gpumon::diagnose {
namespace {

template <typename T>
std::string join(const std::vector<T>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

}  // namespace

nlohmann::json finding_json(const Finding& f) {
  nlohmann::json ev = nlohmann::json::object();
  for (const auto& [k, v] : f.evidence) {
    if (const auto* s = std::get_if<std::string>(&v))
      ev[k] = *s;
    else
      ev[k] = std::get<double>(v);
  }
  nlohmann::json o = {{"id", f.id},
                      {"severity", std::string(severity_name(f.severity))},
                      {"confidence", std::round(f.confidence * 100) / 100},
                      {"title", f.title},
                      {"summary", f.summary},
                      {"evidence", ev},
                      {"start_ms", f.start_ms ? nlohmann::json(*f.start_ms) : nlohmann::json()},
                      {"end_ms", f.end_ms ? nlohmann::json(*f.end_ms) : nlohmann::json()},
                      {"gpus", f.gpus},
                      {"ranks", f.ranks},
                      {"pids", f.pids},
                      {"advice", f.advice},
                      {"deduction", f.deduction},
                      {"scope", f.machine ? "machine" : "run"}};
  if (!f.nodes.empty()) o["nodes"] = f.nodes;
  return o;
}

std::string finding_text(const Finding& f) {
  std::ostringstream o;
  o << "\n[" << severity_name(f.severity) << "] " << f.title << " (" << f.id << ", confidence "
    << fmt(f.confidence, 2) << ")\n";
  if (f.machine)
    o << "  the machine, not this run: no rank of the run uses these GPUs; no points\n";
  o << "  " << f.summary << "\n";
  bool listed = false;
  auto list = [&](const char* name, const std::string& items) {
    if (items.empty()) return;
    o << (listed ? "   " : "  ") << name << ": " << items;
    listed = true;
  };
  std::string nodes;
  for (const auto& n : f.nodes) nodes += (nodes.empty() ? "" : ",") + n;
  list("nodes", nodes), list("GPUs", join(f.gpus)), list("ranks", join(f.ranks));
  list("pids", join(f.pids));
  if (listed) o << "\n";
  if (f.start_ms && f.end_ms)
    o << "  when: " << record::format_iso_ms(*f.start_ms) << " - "
      << record::format_iso_ms(*f.end_ms) << "\n";
  if (!f.evidence.empty()) {
    o << "  evidence:\n";
    for (const auto& [k, v] : f.evidence) o << "    - " << evidence_words(k, v) << "\n";
  }
  o << "  advice: " << f.advice << "\n";
  return o.str();
}

nlohmann::json to_json(const Diagnosis& d, const std::string& recording, Severity min_severity,
                       const std::string& simulated_scenario) {
  nlohmann::json j = {
      {"schema", 1},
      {"recording", recording},
      {"simulated",
       simulated_scenario.empty() ? nlohmann::json() : nlohmann::json(simulated_scenario)},
      {"health_score", d.scored ? nlohmann::json(d.health_score) : nlohmann::json()}};
  j["deductions"] = nlohmann::json::array();
  for (const auto& x : d.deductions)
    j["deductions"].push_back({{"finding", x.finding}, {"points", x.points}, {"reason", x.reason}});
  j["not_judged"] = nlohmann::json::array();
  for (const auto& n : d.not_judged)
    j["not_judged"].push_back({{"check", n.check}, {"reason", n.reason}});
  j["findings"] = nlohmann::json::array();
  for (const auto& f : d.findings)
    if (f.severity >= min_severity) j["findings"].push_back(finding_json(f));
  return j;
}

std::string render_text(const Diagnosis& d, const std::string& recording, Severity min_severity,
                        const std::string& simulated_scenario) {
  std::ostringstream o;
  if (!simulated_scenario.empty())
    o << "SIMULATED GPUs (scenario " << simulated_scenario << "): not a real run\n";
  o << "gpumon doctor: " << recording << "\n";
  if (d.scored)
    o << "health score: " << d.health_score << "/100";
  else
    o << "health score: n/a (no data)";
  if (!d.deductions.empty()) {
    o << " (";
    for (std::size_t i = 0; i < d.deductions.size(); ++i)
      o << (i ? ", " : "") << "-" << d.deductions[i].points << " " << d.deductions[i].finding;
    o << ")";
  }
  o << "\n";
  int shown = 0;
  for (const auto& f : d.findings) {
    if (f.severity < min_severity) continue;
    ++shown;
    o << finding_text(f);
  }
  if (shown == 0)
    o << "\nno findings" << (min_severity > Severity::kInfo ? " at this severity" : "") << "\n";
  if (!d.not_judged.empty()) {
    o << "\nnot judged (the score does not cover these):\n";
    for (const auto& n : d.not_judged) o << "  - " << n.check << ": " << n.reason << "\n";
  }
  return o.str();
}

}  // namespace gpumon::diagnose
