// SPDX-License-Identifier: MIT
// `gpumon record [-o FILE] [--interval MS] [-- COMMAND ARGS...]`: samples every GPU into a
// recording (docs/recording.md) until COMMAND exits (its exit status is returned) or, without a
// command, until Ctrl-C / SIGTERM; then prints a short summary. `gpumon export` reads it back.
#pragma once

#include <string>
#include <vector>

#include "cli/console.h"

namespace gpumon::cli {

int run_record_command(const std::vector<std::string>& args, const Console& console);
int run_export(const std::vector<std::string>& args, const Console& console);

}  // namespace gpumon::cli
