// SPDX-License-Identifier: MIT
// The report page's static parts, embedded at build time by web/embed_report.cmake from
// web/report/ and uPlot (web/node_modules/uplot, licence notice kept). Static storage.
#pragma once

#include <string_view>

namespace gpumon::report {

struct ReportAsset {
  std::string_view report_js;   ///< web/report/report.js: draws the charts from the JSON blob
  std::string_view report_css;  ///< web/report/report.css
  std::string_view uplot_js;    ///< empty when gpumon was built without web/node_modules
  std::string_view uplot_css;
  // The CSP source ('sha256-...') of each of the four texts above, inlined as they are.
  std::string_view report_js_hash;
  std::string_view report_css_hash;
  std::string_view uplot_js_hash;
  std::string_view uplot_css_hash;
  bool has_charts = false;  ///< uPlot was found at build time
};

ReportAsset report_asset();

}  // namespace gpumon::report
