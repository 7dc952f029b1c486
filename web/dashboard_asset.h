// SPDX-License-Identifier: MIT
// The live web dashboard page, embedded at build time (web/CMakeLists.txt runs
// web/embed_dashboard.cmake over web/dashboard/ and uPlot from web/node_modules). Library
// gpumon_web; include as "web/dashboard_asset.h".
#pragma once

#include <string_view>

namespace gpumon {

// The whole page (HTML with uPlot's and the dashboard's CSS/JS inlined): serve it at `/` with
// `Content-Type: text/html; charset=utf-8`. Static storage; valid for the program's life.
// When gpumon was built without web/node_modules (no `npm ci --prefix web`), a short page that
// says how to get the dashboard.
std::string_view dashboard_html();

// The Content-Security-Policy of that page (the page carries it in a <meta> too), plus
// `frame-ancestors 'none'`, which only works as a header: send it as the
// `Content-Security-Policy` response header with the page.
std::string_view dashboard_csp();

// False when the page is the "built without its chart library" one.
bool dashboard_has_charts();

}  // namespace gpumon
