// SPDX-License-Identifier: MIT
// Console: where a command writes and what it knows about the terminal and environment. main()
// builds one over the real stdout; tests build one over string streams (not a terminal) and a
// fixed environment.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace gpumon::cli {

struct Console {
  std::ostream& out;
  std::ostream& err;
  /// File descriptors behind `out` and the keyboard, or -1 when `out` is not a file (tests).
  int out_fd = -1;
  int in_fd = -1;
  /// Environment lookup; the process environment in main().
  std::function<std::optional<std::string>(std::string_view name)> env;
  /// This executable's path (for the hint that names the fake NVML library next to it).
  std::string self_path;

  /// True when `out` is a terminal.
  bool out_is_tty() const;
  /// Columns of the terminal on `out`; 0 when it is not a terminal.
  std::size_t out_columns() const;
  std::optional<std::string> getenv(std::string_view name) const {
    return env ? env(name) : std::nullopt;
  }
};

/// Colour only when stdout is a terminal, NO_COLOR is unset or empty (no-color.org), and TERM
/// is set and not "dumb".
bool color_wanted(bool out_is_tty, const std::optional<std::string>& no_color,
                  const std::optional<std::string>& term);

/// The process environment, as a Console::env.
std::optional<std::string> process_env(std::string_view name);

}  // namespace gpumon::cli
