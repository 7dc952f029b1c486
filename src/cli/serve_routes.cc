// SPDX-License-Identifier: MIT
#include "cli/serve_routes.h"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <variant>

#include "exporter/exposition.h"
#include "exporter/openmetrics.h"
#include "util/json_text.h"
#include "web/dashboard_asset.h"

namespace gpumon::cli {
namespace {

constexpr const char* kJson = "application/json";
constexpr double kDefaultHistorySeconds = 600;
constexpr std::size_t kMaxPoints = 1'000'000;

Response json_error(int status, const std::string& message) {
  return Response::text(status, nlohmann::json{{"error", message}}.dump() + "\n", kJson);
}

// A plain decimal number >= 0 ("600", "1.5"); nullopt for anything else (NaN, inf, "1e999").
std::optional<double> parse_seconds(const std::string& text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (!std::isfinite(value) || value < 0) return std::nullopt;
  return value;
}

// A history route's `seconds` and `points` (both histories take them alike).
struct Window {
  double seconds = kDefaultHistorySeconds;
  std::size_t points = 0;  // 0: no bound
};

std::variant<Window, Response> window_of(const Request& request) {
  Window w;
  if (auto it = request.query.find("seconds"); it != request.query.end()) {
    const auto parsed = parse_seconds(it->second);
    if (!parsed) return json_error(400, "seconds must be a number >= 0, not '" + it->second + "'");
    w.seconds = *parsed;
  }
  if (auto it = request.query.find("points"); it != request.query.end()) {
    const std::string& text = it->second;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), w.points);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || w.points < 2 ||
        w.points > kMaxPoints)
      return json_error(400, "points must be a whole number from 2 to " +
                                 std::to_string(kMaxPoints) + ", not '" + text + "'");
  }
  return w;
}

Response history(exporter::ExporterState& state, const Request& request) {
  auto window = window_of(request);
  if (auto* error = std::get_if<Response>(&window)) return std::move(*error);
  const Window& w = std::get<Window>(window);
  std::vector<std::string> metrics;
  if (auto it = request.query.find("metrics"); it != request.query.end())
    metrics = split_metric_list(it->second);
  try {
    return Response::text(200, state.history_json(w.seconds, metrics, w.points), kJson);
  } catch (const std::invalid_argument& e) {
    return json_error(400, e.what());
  }
}

Response training_history(exporter::ExporterState& state, const Request& request) {
  auto window = window_of(request);
  if (auto* error = std::get_if<Response>(&window)) return std::move(*error);
  const Window& w = std::get<Window>(window);
  return Response::text(200, state.training_history_json(w.seconds, w.points), kJson);
}

}  // namespace

std::vector<std::string> serve_paths() {
  return {"/",
          "/metrics",
          "/health",
          "/api/v1/devices",
          "/api/v1/current",
          "/api/v1/history",
          "/api/v1/training",
          "/api/v1/training/history",
          "/api/v1/diagnoses"};
}

std::vector<std::string> split_metric_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string recording_metrics_text(const std::string& error) {
  std::string out;
  exporter::ExpositionWriter w(out);
  w.family("gpumon_recording_ok",
           "1 while serve --record writes its recording; 0 once a write failed (disk full, I/O "
           "error) and the recording stopped",
           exporter::MetricType::kGauge);
  w.sample({}, error.empty() ? 1 : 0);
  if (!error.empty()) {
    w.family("gpumon_recording_error_info", "Why the recording stopped (the value is always 1)",
             exporter::MetricType::kGauge);
    std::string valid;  // the message names a path: any bytes
    util::for_each_utf8_char(error, [&](std::string_view c) { valid += c; });
    w.sample({{"error", valid}}, 1);
  }
  return out;
}

Handler make_serve_handler(std::shared_ptr<exporter::ExporterState> state,
                           DiagnosesSource diagnoses, RecordingSource recording) {
  // The page is the same for every request: one shared copy, sent without copying.
  auto page = std::make_shared<const std::string>(dashboard_html());
  const std::string csp(dashboard_csp());
  return [state = std::move(state), page, csp, diagnoses = std::move(diagnoses),
          recording = std::move(recording)](const Request& request) -> Response {
    const std::string& path = request.path;
    if (path == "/metrics") {
      Response r;
      r.content_type = std::string(exporter::kPrometheusContentType);
      r.body = state->metrics_text();
      if (diagnoses.metrics_text || recording.error) {
        std::string body = *r.body;
        if (diagnoses.metrics_text) body += diagnoses.metrics_text();
        if (recording.error) body += recording_metrics_text(recording.error());
        r.body = std::make_shared<const std::string>(std::move(body));
      }
      // OpenMetrics when the scraper prefers it, except under --compat dcgm: dcgm-exporter
      // serves the text format, and its counters (no _total) would lose their type.
      if (!state->options().dcgm_compat) r.headers.emplace_back("Vary", "Accept");
      if (!state->options().dcgm_compat &&
          exporter::prefers_openmetrics(request.header("accept"))) {
        r.content_type = std::string(exporter::kOpenMetricsContentType);
        r.body = std::make_shared<const std::string>(exporter::to_openmetrics(*r.body));
      }
      return r;
    }
    if (path == "/api/v1/diagnoses") {
      if (!diagnoses.json) return Response::text(200, "{\"enabled\":false}\n", kJson);
      return Response::text(200, diagnoses.json(), kJson);
    }
    if (path == "/health") {
      const exporter::Health h = state->health();
      // A recording asked for and no longer written is a failure too: nothing else would show
      // it but one line on serve's stderr.
      const std::string stopped = recording.error ? recording.error() : std::string();
      if (stopped.empty()) return Response::text(h.ok ? 200 : 503, h.reason + "\n");
      return Response::text(503,
                            (h.ok ? "" : h.reason + "; ") + "recording stopped: " + stopped + "\n");
    }
    if (path == "/api/v1/current") return Response::text(200, state->current_json(), kJson);
    if (path == "/api/v1/devices") return Response::text(200, state->devices_json(), kJson);
    if (path == "/api/v1/history") return history(*state, request);
    if (path == "/api/v1/training") return Response::text(200, state->training_json(), kJson);
    if (path == "/api/v1/training/history") return training_history(*state, request);
    if (path == "/") {
      Response r;
      r.content_type = "text/html; charset=utf-8";
      r.body = page;
      r.headers.emplace_back("Content-Security-Policy", csp);
      return r;
    }
    return json_error(404, "no such path: " + path);  // the server's allow-list stops these
  };
}

}  // namespace gpumon::cli
