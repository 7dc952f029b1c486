// SPDX-License-Identifier: MIT
// diagnose(): runs every rule over RunData; the findings, sorted by severity then deduction,
// and a health score of 100 minus the deductions (clamped to 0-100), each deduction with its
// reason. What a recording's data cannot cover is a finding too (`no_data`,
// `recording_cut_short`, listed first: it qualifies every other), so a score is never read as a
// clean bill for a run that was not seen; the checks that could not run are listed with why
// (`not_judged`), and a finding about a GPU no rank of the run uses is the machine's state
// (Finding::machine), costing no points. to_json() is the `gpumon doctor --json` object
// (docs/DIAGNOSES.md); render_text() the terminal form.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "diagnose/finding.h"
#include "diagnose/run_data.h"
#include "diagnose/thresholds.h"

namespace gpumon::diagnose {

struct Deduction {
  std::string finding;  ///< its id
  int points = 0;
  std::string reason;
};

/// A check that could not run (coverage.h).
struct NotJudged {
  std::string check;   ///< the finding ids it would give, comma separated ("memory_leak, ...")
  std::string reason;  ///< why it could not run, and what would let it
};

struct Diagnosis {
  std::vector<Finding> findings;
  /// False when a recording holds no GPU sample and no training step: nothing was checked, so
  /// health_score means nothing (shown as n/a, null in JSON) and a `no_data` finding says so.
  bool scored = true;
  int health_score = 100;
  std::vector<Deduction> deductions;
  /// The checks that could not run and why: the score covers the others only.
  std::vector<NotJudged> not_judged;
};

Diagnosis diagnose(const RunData& run, const Thresholds& thresholds = {});

/// The last part of diagnose(), for findings made elsewhere (a job across nodes): clamps
/// confidences, drops non-finite evidence, sets each deduction, sorts by severity then
/// deduction, and fills `deductions` and `health_score`.
void score_findings(Diagnosis& d, const Thresholds& thresholds = {});

/// `{"schema": 1, "recording": ..., "simulated": ..., "health_score": ..., "deductions": [...],
/// "findings": [...]}` with findings below `min_severity` left out (the score still counts
/// every finding). "simulated" is the fake NVML's scenario, null on real GPUs: the one key
/// every JSON output of gpumon uses for it; the text says SIMULATED first.
nlohmann::json to_json(const Diagnosis& d, const std::string& recording,
                       Severity min_severity = Severity::kInfo,
                       const std::string& simulated_scenario = "");
/// One finding as to_json() lists it, and as render_text() writes it.
nlohmann::json finding_json(const Finding& f);
std::string finding_text(const Finding& f);

std::string render_text(const Diagnosis& d, const std::string& recording,
                        Severity min_severity = Severity::kInfo,
                        const std::string& simulated_scenario = "");

}  // namespace gpumon::diagnose
