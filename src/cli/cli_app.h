// SPDX-License-Identifier: MIT
// The `gpumon` command line: picks the subcommand and runs it. main() only builds the Console.
#pragma once

#include <string>
#include <vector>

#include "cli/console.h"

namespace gpumon::cli {

/// The top-level help: subcommands, snapshot options, environment, exit codes.
std::string help_text();

/// Runs `gpumon <args>` (args exclude the program name) and returns the exit status:
/// no arguments or only snapshot flags -> the snapshot; `watch`, `-w`, `--watch` -> the live
/// view; `query` -> nvidia-smi style queries; `--version`; `--help`. An unknown command, or
/// any exception, prints "gpumon: <what>" and returns 2.
int run_cli(const std::vector<std::string>& args, const Console& console);

}  // namespace gpumon::cli
