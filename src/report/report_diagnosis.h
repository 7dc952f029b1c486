// SPDX-License-Identifier: MIT
// The diagnosis engine's result (src/diagnose/) as the report's plain ReportDiagnosis.
//
// Thread-safety: pure functions (diagnose_recording reads the file).
#pragma once

#include <string>

#include "diagnose/diagnosis.h"
#include "record/recording_reader.h"
#include "report/report_findings.h"

namespace gpumon::report {

ReportDiagnosis report_diagnosis(const diagnose::Diagnosis& d);

/// Loads the recording at `path` for the diagnosis and runs it; or why it cannot be read.
record::ReadResult<ReportDiagnosis> diagnose_recording(const std::string& path);

}  // namespace gpumon::report
