// SPDX-License-Identifier: MIT
// The report page: one self-contained HTML document (docs/report.md). Tables and an inline SVG
// sparkline per GPU are written here, so the page reads without JavaScript; the charts are drawn
// by web/report/report.js with uPlot from one JSON blob. Every inline element is allowed by its
// sha256 hash in the page's Content-Security-Policy; nothing is fetched.
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "report/report_asset.h"
#include "report/run_report.h"

namespace gpumon::report {

/// The JSON the charts draw from (safe inside <script type="application/json">); with a
/// `baseline`, that run's under "baseline".
std::string report_json(const RunReport& run, const RunReport* baseline = nullptr);

/// The Content-Security-Policy of the page built from `asset`.
std::string report_csp(const ReportAsset& asset);

/// The whole page; `baseline` may be null.
std::string render_report(const RunReport& run, const RunReport* baseline,
                          const ReportAsset& asset);

/// An inline SVG sparkline of a GPU's utilization (mean line, min-max band), with throttled
/// (orange) and lost (red) stretches; empty when it has no utilization samples.
std::string sparkline_svg(const GpuReport& gpu, const TimeGrid& grid);

}  // namespace gpumon::report
