// SPDX-License-Identifier: MIT
// The live diagnoses in Prometheus text (docs/exporter.md, "Diagnoses"), appended to
// `gpumon serve`'s /metrics:
//   gpumon_health_score                                  gauge 0-100
//   gpumon_diagnosis_active{id,severity[,gpu][,rank]}    gauge 1 per active finding
// A finding about GPUs has one series per GPU (with `rank` when it names exactly one rank), one
// about ranks only one per rank, one about neither a single series; duplicates are merged.
//
// Thread-safety: pure function.
#pragma once

#include <string>

#include "diagnose/diagnosis.h"

namespace gpumon::diagnose {

std::string diagnosis_metrics_text(const Diagnosis& d);

}  // namespace gpumon::diagnose
