// SPDX-License-Identifier: MIT
#include "report/report_diagnosis.h"

#include <cmath>

#include "diagnose/evidence_words.h"
#include "diagnose/run_data_loader.h"
#include "report/summary.h"

namespace gpumon::report {
namespace {

// The value as the JSON carries it: a number (finite: diagnose() drops the others) with the
// digits that matter, or the words.
ReportEvidence evidence(const std::string& key, const diagnose::EvidenceValue& v) {
  ReportEvidence e{key, "", false, diagnose::evidence_words(key, v)};
  if (const auto* s = std::get_if<std::string>(&v)) {
    e.value = *s;
    return e;
  }
  const double x = std::get<double>(v);
  e.number = std::isfinite(x);
  if (!e.number)
    e.value = "n/a";
  else if (x == std::floor(x) && std::fabs(x) < 1e15)
    e.value = fixed(x, 0);
  else
    e.value = fixed(x, std::fabs(x) >= 100 ? 1 : 3);
  return e;
}

}  // namespace

ReportDiagnosis report_diagnosis(const diagnose::Diagnosis& d) {
  ReportDiagnosis out;
  out.scored = d.scored;
  out.health_score = d.health_score;
  for (const auto& x : d.deductions) out.deductions.push_back({x.finding, x.points, x.reason});
  for (const auto& n : d.not_judged) out.not_judged.emplace_back(n.check, n.reason);
  for (const auto& f : d.findings) {
    ReportFinding r;
    r.id = f.id;
    r.severity = std::string(diagnose::severity_name(f.severity));
    r.confidence = f.confidence;
    r.title = f.title;
    r.summary = f.summary;
    r.advice = f.advice;
    for (const auto& [key, value] : f.evidence) r.evidence.push_back(evidence(key, value));
    r.start_ms = f.start_ms;
    r.end_ms = f.end_ms;
    r.gpus = f.gpus;
    r.ranks = f.ranks;
    r.pids = f.pids;
    r.deduction = f.deduction;
    r.machine = f.machine;
    out.findings.push_back(std::move(r));
  }
  return out;
}

record::ReadResult<ReportDiagnosis> diagnose_recording(const std::string& path) {
  auto data = diagnose::load_run_data(path);
  if (auto* e = std::get_if<std::string>(&data)) return *e;
  return report_diagnosis(diagnose::diagnose(std::get<diagnose::RunData>(data)));
}

}  // namespace gpumon::report
