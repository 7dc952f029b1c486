// SPDX-License-Identifier: MIT
// Runs a CLI11 parser over arguments already split off argv, with gpumon's exit codes: help
// prints to the console's out and ends with 0; any usage error prints "gpumon: <what>" and a
// pointer to --help, and ends with kExitUsage.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/console.h"

namespace gpumon::cli {

/// Exit status for a command line gpumon does not understand.
constexpr int kExitUsage = 2;

/// nullopt when parsing succeeded and the command should run; otherwise the exit status.
std::optional<int> parse_args(CLI::App& app, std::vector<std::string> args, const Console& console,
                              const std::string& help_hint);

}  // namespace gpumon::cli
