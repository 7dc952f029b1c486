// SPDX-License-Identifier: MIT
#include "diagnose/live/live_findings.h"

#include <nlohmann/json.hpp>

#include "record/recording_types.h"

namespace gpumon::diagnose {

nlohmann::json compact_finding(const Finding& f) {
  nlohmann::json j = {{"id", f.id},
                      {"severity", std::string(severity_name(f.severity))},
                      {"title", f.title},
                      {"summary", f.summary},
                      {"confidence", f.confidence},
                      {"gpus", f.gpus},
                      {"ranks", f.ranks},
                      {"pids", f.pids},  // processes without a RANK
                      {"scope", f.machine ? "machine" : "run"}};
  if (f.start_ms) j["start_ms"] = *f.start_ms;
  if (f.end_ms) j["end_ms"] = *f.end_ms;
  return j;
}

std::string findings_message(const Diagnosis& d) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& f : d.findings) list.push_back(compact_finding(f));
  // "type" first: clients recognise the line by its start (agent_client.h).
  nlohmann::ordered_json m;
  m["type"] = "findings";
  m["health_score"] = d.health_score;
  m["findings"] = std::move(list);
  return m.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string finding_log_line(const Finding& f, bool cleared, std::int64_t now_ms) {
  std::string line = record::format_iso_ms(now_ms) + " " +
                     (cleared ? std::string("cleared") : std::string(severity_name(f.severity))) +
                     " " + f.id;
  auto list = [&](const char* what, const auto& v) {
    if (v.empty()) return;
    line += std::string(" ") + what + " ";
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i != 0) line += ',';
      line += std::to_string(v[i]);
    }
  };
  list("gpu", f.gpus);
  list("rank", f.ranks);
  list("pid", f.pids);
  line += ": " + f.summary;
  return line;
}

}  // namespace gpumon::diagnose
