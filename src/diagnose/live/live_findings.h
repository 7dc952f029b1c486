// SPDX-License-Identifier: MIT
// The short forms of live findings: the compact JSON a training client receives (one NDJSON
// line, docs/python.md "Protocol") and the one-line log entry the agent writes on stderr.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "diagnose/diagnosis.h"

namespace gpumon::diagnose {

/// {"id", "severity", "title", "summary", "confidence", "gpus", "ranks", "start_ms"?, "end_ms"?}
nlohmann::json compact_finding(const Finding& f);
/// `{"type":"findings","health_score":N,"findings":[compact...]}` (no newline), in that
/// order: clients recognise the line by its first bytes.
std::string findings_message(const Diagnosis& d);
/// "2026-11-30T01:02:03.456Z warning data_loader_stall gpu 0 rank 0: <summary>", or with
/// "cleared" in place of the severity when `cleared`. `now_ms`: ms since the epoch.
std::string finding_log_line(const Finding& f, bool cleared, std::int64_t now_ms);

}  // namespace gpumon::diagnose
