// SPDX-License-Identifier: MIT
// The routes of `gpumon serve` (docs/exporter.md, "Endpoints"): a Handler for src/http's
// HttpServer over an ExporterState. Every route serves what the state already holds; none
// calls NVML.
//
// Thread-safety: the handler may run on several worker threads at once (ExporterState's
// render members are thread-safe). Lifetime: `state` is shared, so it outlives the handler.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "exporter/exporter_state.h"
#include "http/http_types.h"

namespace gpumon::cli {

/// The exact paths the handler serves, for ServerOptions::paths (anything else is a 404 in
/// the server, before the handler).
std::vector<std::string> serve_paths();

/// The live diagnoses (src/diagnose/live) as serve shows them, kept apart from the exporter's
/// state. Both unset: serve runs none (/metrics has no diagnosis families, /api/v1/diagnoses
/// answers {"enabled": false}). Called on the HTTP worker threads: must be thread-safe.
struct DiagnosesSource {
  std::function<std::string()> metrics_text;  ///< appended to the /metrics body
  std::function<std::string()> json;          ///< the /api/v1/diagnoses body
};

/// The recording of `serve --record FILE`. Unset: serve records nothing (/metrics has no
/// gpumon_recording_* families). Called on the HTTP worker threads: must be thread-safe.
struct RecordingSource {
  /// Empty while the recording is written; else why it stopped ("disk full: recording stopped
  /// at ..."), which /health answers with a 503 and /metrics shows as gpumon_recording_ok 0
  /// and gpumon_recording_error_info{error="..."} 1.
  std::function<std::string()> error;
};

/// The /metrics families of `recording` (the exposition format, after the exporter's body).
std::string recording_metrics_text(const std::string& error);

/// `/metrics`, `/health`, `/api/v1/devices`, `/api/v1/current`, `/api/v1/history`,
/// `/api/v1/training`, `/api/v1/training/history`, `/api/v1/diagnoses` and `/`.
/// `/api/v1/history?seconds=N&metrics=a,b&points=P`: N a number >= 0 (default 600), metrics
/// catalog names, P (optional) at most that many samples per GPU, 2 to 1000000; anything else
/// is a 400 with a JSON `{"error": ...}` body. `/api/v1/training/history?seconds=N&points=P`
/// alike, P per training process.
Handler make_serve_handler(std::shared_ptr<exporter::ExporterState> state,
                           DiagnosesSource diagnoses = {}, RecordingSource recording = {});

/// Splits "a,b,,c" into {"a", "b", "c"} (empty items dropped).
std::vector<std::string> split_metric_list(const std::string& text);

}  // namespace gpumon::cli
