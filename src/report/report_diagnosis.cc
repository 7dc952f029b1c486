// SPDX-License-Identifier: MIT
#include "report/report_diagnosis.h"

#include <cmath>

#include "diagnose/run_data_loader.h"
#include "report/summary.h"

namespace gpumon::report {
namespace {

std::string evidence_text(const diagnose::EvidenceValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  const double x = std::get<double>(v);
  if (x == std::floor(x) && std::fabs(x) < 1e15) return fixed(x, 0);
  return fixed(x, std::fabs(x) >= 100 ? 1 : 3);
}

}  // namespace

ReportDiagnosis report_diagnosis(const diagnose::Diagnosis& d) {
  ReportDiagnosis out;
  out.health_score = d.health_score;
  for (const auto& x : d.deductions) out.deductions.push_back({x.finding, x.points, x.reason});
  for (const auto& f : d.findings) {
    ReportFinding r;
    r.id = f.id;
    r.severity = std::string(diagnose::severity_name(f.severity));
    r.confidence = f.confidence;
    r.title = f.title;
    r.summary = f.summary;
    r.advice = f.advice;
    for (const auto& [name, value] : f.evidence)
      r.evidence.emplace_back(name, evidence_text(value));
    r.start_ms = f.start_ms;
    r.end_ms = f.end_ms;
    r.gpus = f.gpus;
    r.ranks = f.ranks;
    r.pids = f.pids;
    r.deduction = f.deduction;
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
