// SPDX-License-Identifier: MIT
// `gpumon export RUN.gpumon [--format csv|jsonl] [--metrics a,b] [--gpu N] [--show-uuid]
// [--no-units]`: a recording's samples back as CSV or JSON lines (docs/recording.md).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace gpumon::record {

inline constexpr int kExportOk = 0;
inline constexpr int kExportReadError = 1;  ///< the recording cannot be read (message on err)
inline constexpr int kExportUsage = 2;      ///< bad arguments (message on err)

/// `args` are the words after "export". Prints samples to `out`, messages to `err`; never
/// throws. A damaged recording stops the export with a message after the rows already printed.
int run_export_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace gpumon::record
