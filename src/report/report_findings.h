// SPDX-License-Identifier: MIT
// What the report shows of a run's diagnosis (src/diagnose/): the health score with
// its deductions, and the findings with their evidence, advice, time range, GPUs and ranks.
// Plain values, so the page does not depend on the diagnosis engine's types; an adapter fills
// them from diagnose::Diagnosis.
//
// Thread-safety: plain values; pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpumon::report {

/// One number or fact of a finding's evidence.
struct ReportEvidence {
  std::string key;    ///< the machine key, as in `gpumon doctor --json` ("gpu5_throttle_share")
  std::string value;  ///< a number as JSON writes it, or words
  bool number = false;
  std::string words;  ///< for people, with units ("GPU 5 throttled 29 % of its busy time")
};

struct ReportFinding {
  std::string id;
  std::string severity;   ///< "info", "warning", "critical"
  double confidence = 0;  ///< 0-1
  std::string title, summary, advice;
  std::vector<ReportEvidence> evidence;
  std::optional<std::int64_t> start_ms, end_ms;  ///< ms since the epoch
  std::vector<unsigned> gpus;                    ///< NVML indices; empty: the whole run
  std::vector<std::int64_t> ranks;               ///< training ranks
  std::vector<std::int64_t> pids;                ///< training processes without a known rank
  int deduction = 0;                             ///< health points it took off
  bool machine = false;  ///< about GPUs no rank of the run uses (diagnose::Finding::machine)
};

struct ReportDeduction {
  std::string finding;  ///< its id
  int points = 0;
  std::string reason;
};

struct ReportDiagnosis {
  int health_score = 100;
  std::vector<ReportDeduction> deductions;
  std::vector<ReportFinding> findings;  ///< most severe first
  bool scored = true;  ///< diagnose::Diagnosis::scored: false, no data and no score
  /// diagnose::Diagnosis::not_judged: (checks, why they could not run)
  std::vector<std::pair<std::string, std::string>> not_judged;
};

/// The summary's health score cell: "87 / 100 (-8 data_loader_stall, -5 thermal_throttle)".
std::string health_text(const ReportDiagnosis& d);

/// The findings section: each finding with severity, confidence, time, GPUs, ranks, evidence
/// in words (each item carries its key as data-key) and advice (all text escaped); says so
/// when there are none.
/// `id` and `heading` name the section (a job's page has one per node); its "not judged" list
/// is `not-judged` in the run's section, ID-not-judged in others.
void write_findings(std::string& out, const ReportDiagnosis& d, std::string_view id = "findings",
                    std::string_view heading = "Findings");

/// `[{"id","severity","title","start","end","gpus","ranks","evidence"}, ...]`: every finding,
/// start and end in seconds (null without a time range: no marker on the charts), evidence by
/// its machine keys (`{"gpu5_throttle_share":0.29,...}`).
void append_findings_json(std::string& out, const ReportDiagnosis& d);

}  // namespace gpumon::report
