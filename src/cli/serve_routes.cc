// SPDX-License-Identifier: MIT
#include "cli/serve_routes.h"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "exporter/exposition.h"
#include "web/dashboard_asset.h"

namespace gpumon::cli {
namespace {

constexpr const char* kJson = "application/json";
constexpr double kDefaultHistorySeconds = 600;

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

Response history(exporter::ExporterState& state, const Request& request) {
  double seconds = kDefaultHistorySeconds;
  if (auto it = request.query.find("seconds"); it != request.query.end()) {
    const auto parsed = parse_seconds(it->second);
    if (!parsed) return json_error(400, "seconds must be a number >= 0, not '" + it->second + "'");
    seconds = *parsed;
  }
  std::vector<std::string> metrics;
  if (auto it = request.query.find("metrics"); it != request.query.end())
    metrics = split_metric_list(it->second);
  try {
    return Response::text(200, state.history_json(seconds, metrics), kJson);
  } catch (const std::invalid_argument& e) {
    return json_error(400, e.what());
  }
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

Handler make_serve_handler(std::shared_ptr<exporter::ExporterState> state,
                           DiagnosesSource diagnoses) {
  // The page is the same for every request: one shared copy, sent without copying.
  auto page = std::make_shared<const std::string>(dashboard_html());
  const std::string csp(dashboard_csp());
  return [state = std::move(state), page, csp,
          diagnoses = std::move(diagnoses)](const Request& request) -> Response {
    const std::string& path = request.path;
    if (path == "/metrics") {
      Response r;
      r.content_type = std::string(exporter::kPrometheusContentType);
      r.body = state->metrics_text();
      if (diagnoses.metrics_text)
        r.body = std::make_shared<const std::string>(*r.body + diagnoses.metrics_text());
      return r;
    }
    if (path == "/api/v1/diagnoses") {
      if (!diagnoses.json) return Response::text(200, "{\"enabled\":false}\n", kJson);
      return Response::text(200, diagnoses.json(), kJson);
    }
    if (path == "/health") {
      const exporter::Health h = state->health();
      return Response::text(h.ok ? 200 : 503, h.reason + "\n");
    }
    if (path == "/api/v1/current") return Response::text(200, state->current_json(), kJson);
    if (path == "/api/v1/devices") return Response::text(200, state->devices_json(), kJson);
    if (path == "/api/v1/history") return history(*state, request);
    if (path == "/api/v1/training") return Response::text(200, state->training_json(), kJson);
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
