// SPDX-License-Identifier: MIT
// diagnose(): runs every rule over RunData; the findings, sorted by severity then deduction,
// and a health score of 100 minus the deductions (clamped to 0-100), each deduction with its
// reason. What a recording's data cannot cover is a finding too (`no_data`,
// `recording_cut_short`, listed first: it qualifies every other), so a score is never read as a
// clean bill for a run that was not seen. to_json() is the `gpumon doctor --json` object
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

struct Diagnosis {
  std::vector<Finding> findings;
  /// False when a recording holds no GPU sample and no training step: nothing was checked, so
  /// health_score means nothing (shown as n/a, null in JSON) and a `no_data` finding says so.
  bool scored = true;
  int health_score = 100;
  std::vector<Deduction> deductions;
};

Diagnosis diagnose(const RunData& run, const Thresholds& thresholds = {});

/// `{"schema": 1, "recording": ..., "simulated": ..., "health_score": ..., "deductions": [...],
/// "findings": [...]}` with findings below `min_severity` left out (the score still counts
/// every finding). "simulated" is the fake NVML's scenario, null on real GPUs: the one key
/// every JSON output of gpumon uses for it; the text says SIMULATED first.
nlohmann::json to_json(const Diagnosis& d, const std::string& recording,
                       Severity min_severity = Severity::kInfo,
                       const std::string& simulated_scenario = "");
std::string render_text(const Diagnosis& d, const std::string& recording,
                        Severity min_severity = Severity::kInfo,
                        const std::string& simulated_scenario = "");

}  // namespace gpumon::diagnose
