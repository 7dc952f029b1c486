// SPDX-License-Identifier: MIT
// `gpumon watch [--interval S] [--count N] [--no-color]`: the live view. Full screen on a
// terminal (q or Ctrl-C quits); a plain snapshot every interval when stdout is not a
// terminal or TERM is dumb.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/console.h"

namespace gpumon::cli {

struct WatchFlags {
  double interval_s = 1.0;  ///< >= 0.1
  std::uint64_t count = 0;  ///< frames to show before exiting; 0: until quit
  bool no_color = false;
};

/// Exit status: 0 after q, Ctrl-C, SIGTERM or --count frames; 1 when no GPUs could be opened;
/// 2 for bad arguments.
int run_watch_command(const std::vector<std::string>& args, const Console& console);

/// True when the live view should take the full screen: stdout is a terminal and TERM is set
/// and not "dumb".
bool use_full_screen(bool out_is_tty, const std::optional<std::string>& term);

}  // namespace gpumon::cli
