# SPDX-License-Identifier: MIT
# Builds the self-contained dashboard page and (optionally) the C++ source that embeds it.
#
#   cmake -DSRC_DIR=web/dashboard -DUPLOT_DIR=web/node_modules/uplot -DOUT_HTML=out.html
#         [-DOUT_CC=dashboard_asset.cc] [-DFORCE_FALLBACK=ON] -P web/embed_dashboard.cmake
#
# The page is SRC_DIR/index.html with its @GPUMON_*@ markers replaced by uPlot's minified JS and
# CSS (UPLOT_DIR/dist, licence banner kept), dashboard.js, dashboard.css and a
# Content-Security-Policy that allows exactly those inline elements (sha256 hashes) and fetches
# to the same origin. Without UPLOT_DIR/dist (npm ci --prefix web not run) it writes a small
# page that says so. Outputs are rewritten only when their content changes.
# Plain CMake on purpose: building gpumon needs no python3, node or xxd.
cmake_minimum_required(VERSION 3.25)
include("${CMAKE_CURRENT_LIST_DIR}/uplot_notice.cmake")

foreach(v SRC_DIR UPLOT_DIR OUT_HTML)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "embed_dashboard.cmake: -D${v}=... is required")
  endif()
endforeach()

# sha256 of `text` as CSP wants it: 'sha256-<base64 of the digest>'.
function(csp_hash text out)
  string(SHA256 hex "${text}")
  set(alphabet "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
  string(LENGTH "${hex}" n)
  set(b64 "")
  set(i 0)
  while(i LESS n)
    math(EXPR left "${n} - ${i}")
    if(left GREATER_EQUAL 6)
      string(SUBSTRING "${hex}" ${i} 6 chunk)
      set(chars 4)
      set(pad "")
    elseif(left EQUAL 4)
      string(SUBSTRING "${hex}" ${i} 4 chunk)
      string(APPEND chunk "00")
      set(chars 3)
      set(pad "=")
    else()
      string(SUBSTRING "${hex}" ${i} 2 chunk)
      string(APPEND chunk "0000")
      set(chars 2)
      set(pad "==")
    endif()
    math(EXPR bits "0x${chunk}")
    foreach(k RANGE 1 ${chars})
      math(EXPR shift "24 - 6 * ${k}")
      math(EXPR idx "(${bits} >> ${shift}) & 63")
      string(SUBSTRING "${alphabet}" ${idx} 1 c)
      string(APPEND b64 "${c}")
    endforeach()
    string(APPEND b64 "${pad}")
    math(EXPR i "${i} + 6")
  endwhile()
  set(${out} "'sha256-${b64}'" PARENT_SCOPE)
endfunction()

# Fails when `text` could end its inline element early.
function(check_inline what text closing)
  string(TOLOWER "${text}" lower)
  string(FIND "${lower}" "${closing}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "embed_dashboard.cmake: ${what} contains '${closing}' and cannot be inlined")
  endif()
  string(FIND "${text}" "@GPUMON_" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "embed_dashboard.cmake: ${what} contains a template marker")
  endif()
endfunction()

# Replaces the one `marker` in `var` with `value`.
function(fill var marker value)
  set(text "${${var}}")
  string(FIND "${text}" "${marker}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "embed_dashboard.cmake: ${marker} missing from the template")
  endif()
  string(LENGTH "${marker}" mlen)
  string(SUBSTRING "${text}" 0 ${at} head)
  math(EXPR rest "${at} + ${mlen}")
  string(SUBSTRING "${text}" ${rest} -1 tail)
  set(${var} "${head}${value}${tail}" PARENT_SCOPE)
endfunction()

function(write_if_changed path content)
  set(tmp "${path}.tmp")
  file(WRITE "${tmp}" "${content}")
  file(COPY_FILE "${tmp}" "${path}" ONLY_IF_DIFFERENT)
  file(REMOVE "${tmp}")
endfunction()

set(uplot_js_file "${UPLOT_DIR}/dist/uPlot.iife.min.js")
set(uplot_css_file "${UPLOT_DIR}/dist/uPlot.min.css")
set(has_charts ON)
if(FORCE_FALLBACK OR NOT EXISTS "${uplot_js_file}" OR NOT EXISTS "${uplot_css_file}")
  set(has_charts OFF)
endif()

if(has_charts)
  file(READ "${SRC_DIR}/index.html" html)
  file(READ "${SRC_DIR}/dashboard.js" dash_js)
  file(READ "${SRC_DIR}/dashboard.css" dash_css)
  file(READ "${uplot_js_file}" uplot_js)
  file(READ "${uplot_css_file}" uplot_css)
  # uPlot's own banner stays first in its script; the licence line makes the MIT notice explicit.
  uplot_notice("${UPLOT_DIR}" notice)
  set(uplot_js "${uplot_js}\n${notice}\n")
  set(uplot_css "${notice}\n${uplot_css}")

  check_inline("uPlot JS" "${uplot_js}" "</script")
  check_inline("dashboard.js" "${dash_js}" "</script")
  check_inline("uPlot CSS" "${uplot_css}" "</style")
  check_inline("dashboard.css" "${dash_css}" "</style")
  check_inline("uPlot JS" "${uplot_js}" "<!--")
  check_inline("dashboard.js" "${dash_js}" "<!--")

  csp_hash("${uplot_js}" h_ujs)
  csp_hash("${dash_js}" h_djs)
  csp_hash("${uplot_css}" h_ucss)
  csp_hash("${dash_css}" h_dcss)
  # No 'unsafe-inline' anywhere: only these four inline elements run or apply. uPlot and the
  # dashboard set styles through the CSSOM (element.style), which style-src does not govern.
  set(csp "default-src 'none'; script-src ${h_ujs} ${h_djs}; style-src ${h_ucss} ${h_dcss}; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'")

  fill(html "@GPUMON_CSP@" "${csp}")
  fill(html "@GPUMON_UPLOT_CSS@" "${uplot_css}")
  fill(html "@GPUMON_DASHBOARD_CSS@" "${dash_css}")
  fill(html "@GPUMON_UPLOT_JS@" "${uplot_js}")
  fill(html "@GPUMON_DASHBOARD_JS@" "${dash_js}")
  set(has_charts_cc "true")
else()
  set(style "body{font:15px/1.5 system-ui,sans-serif;max-width:46em;margin:3em auto;padding:0 1em;color:#1d2330}code{background:#eef0f3;padding:1px 4px;border-radius:3px}")
  csp_hash("${style}" h_style)
  set(csp "default-src 'none'; style-src ${h_style}; img-src 'self' data:; base-uri 'none'; form-action 'none'")
  set(html "<!doctype html>
<html lang=\"en\">
<head>
<meta charset=\"utf-8\">
<meta http-equiv=\"Content-Security-Policy\" content=\"${csp}\">
<title>gpumon: dashboard not built</title>
<link rel=\"icon\" href=\"data:,\">
<style>${style}</style>
</head>
<body data-state=\"no-chart-library\">
<h1>gpumon</h1>
<p>This gpumon was built without the dashboard's chart library (uPlot, from npm), so the live
dashboard is not available.</p>
<p>To build it, run <code>npm ci --prefix web</code> in the source folder (or
<code>scripts/setup.sh</code>) and rebuild gpumon.</p>
<p>The data is still served: <a href=\"api/v1/current\">/api/v1/current</a>,
<a href=\"api/v1/devices\">/api/v1/devices</a>, <a href=\"api/v1/history\">/api/v1/history</a> and
<a href=\"metrics\">/metrics</a>.</p>
</body>
</html>
")
  set(has_charts_cc "false")
endif()

write_if_changed("${OUT_HTML}" "${html}")

if(DEFINED OUT_CC AND NOT OUT_CC STREQUAL "")
  # One byte per element: no string literal limit (C++ guarantees only 64 KiB literals).
  file(READ "${OUT_HTML}" hex HEX)
  string(LENGTH "${hex}" hex_len)
  math(EXPR size "${hex_len} / 2")
  # 20 bytes (40 hex digits) a line, then each byte as 0xNN.
  string(REGEX REPLACE "(........................................)" "\\1\n" hex "${hex}")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  if(NOT bytes MATCHES "\n$")
    string(APPEND bytes "\n")
  endif()
  # The header form of the policy may also forbid framing (ignored, and warned about, in <meta>).
  set(csp_header "${csp}; frame-ancestors 'none'")
  string(REPLACE "\\" "\\\\" csp_header "${csp_header}")
  string(REPLACE "\"" "\\\"" csp_header "${csp_header}")
  write_if_changed("${OUT_CC}" "// Generated by web/embed_dashboard.cmake from web/dashboard/ and uPlot: do not edit.
#include \"web/dashboard_asset.h\"

namespace gpumon {
namespace {

constexpr unsigned char kDashboardHtml[${size} + 1] = {
${bytes}0x00};

}  // namespace

std::string_view dashboard_html() {
  return {reinterpret_cast<const char*>(kDashboardHtml), ${size}};
}

std::string_view dashboard_csp() {
  return \"${csp_header}\";
}

bool dashboard_has_charts() { return ${has_charts_cc}; }

}  // namespace gpumon
")
endif()
