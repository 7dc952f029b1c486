// SPDX-License-Identifier: MIT
#include "cli/console.h"

#include <unistd.h>

#include <cstdlib>

#include "cli/terminal.h"

namespace gpumon::cli {

bool Console::out_is_tty() const {
  return out_fd >= 0 && ::isatty(out_fd) != 0;
}

std::size_t Console::out_columns() const {
  if (!out_is_tty()) return 0;
  const auto size = terminal_size(out_fd);
  return size ? size->cols : 80;
}

bool color_wanted(bool out_is_tty, const std::optional<std::string>& no_color,
                  const std::optional<std::string>& term) {
  if (!out_is_tty) return false;
  if (no_color && !no_color->empty()) return false;
  return term && !term->empty() && *term != "dumb";
}

std::optional<std::string> process_env(std::string_view name) {
  const char* v = std::getenv(std::string(name).c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

}  // namespace gpumon::cli
