// SPDX-License-Identifier: MIT
// OpenMetrics 1.0 for scrapers that ask for it (Prometheus lists it first in every scrape's
// Accept header). /metrics is rendered once, in the text format 0.0.4; an OpenMetrics answer is
// that body rewritten line by line, which differs only in its metadata:
//   - a counter family is named without its `_total` (its samples keep it), and a counter
//     whose samples lack `_total` is typed `unknown`, which OpenMetrics allows;
//   - `untyped` is `unknown`; HELP also escapes `"`;
//   - the body ends with `# EOF`.
// Samples, labels and numbers are the same bytes in both formats.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace gpumon::exporter {

/// The Content-Type of an OpenMetrics answer.
inline constexpr std::string_view kOpenMetricsContentType =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Whether an Accept header prefers OpenMetrics to the text format: an
/// `application/openmetrics-text` range with q > 0 and a q no lower than the best q of
/// `text/plain`, `text/*` or `*/*` (so a browser's or curl's `*/*` keeps the text format).
bool prefers_openmetrics(std::string_view accept);

/// `text` (a text-format 0.0.4 exposition, as ExpositionWriter writes it) as OpenMetrics 1.0.
std::string to_openmetrics(std::string_view text);

}  // namespace gpumon::exporter
