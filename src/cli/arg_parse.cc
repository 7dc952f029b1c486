// SPDX-License-Identifier: MIT
#include "cli/arg_parse.h"

#include <algorithm>

namespace gpumon::cli {

std::optional<int> parse_args(CLI::App& app, std::vector<std::string> args, const Console& console,
                              const std::string& help_hint) {
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments in reverse order
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    console.out << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    console.err << "gpumon: " << e.what() << "\nRun '" << help_hint << "' for usage.\n";
    return kExitUsage;
  }
  return std::nullopt;
}

}  // namespace gpumon::cli
