// SPDX-License-Identifier: MIT
// `gpumon report RUN.gpumon [-o report.html] [--baseline OTHER.gpumon] [--force]`: one
// self-contained HTML page of a recording (docs/report.md).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace gpumon::report {

inline constexpr int kReportOk = 0;
inline constexpr int kReportFailed = 1;  ///< a recording cannot be read, or the page written
inline constexpr int kReportUsage = 2;   ///< bad arguments

/// `args` are the words after "report". Writes the page, one line about it on `out`, messages
/// on `err`; never throws. Refuses to replace an existing file unless --force.
int run_report_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace gpumon::report
