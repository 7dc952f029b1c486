// SPDX-License-Identifier: MIT
// The terminal for `gpumon watch`, with plain ANSI escape codes (no ncurses: docs/cli.md says
// why). FullScreen enters the alternate screen and raw-ish input, and puts everything back on
// every way out: its destructor, an atexit hook, and (on a second Ctrl-C while the first is
// still being handled) an async-signal-safe restore in the handler itself. Signal handlers only
// set flags; the loop polls them.
//
// Thread-safety: one FullScreen at a time, used from the main thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpumon::cli {

struct TerminalSize {
  std::size_t rows = 24;
  std::size_t cols = 80;
};

/// The size of the terminal on `fd`, or nullopt when it is not a terminal.
std::optional<TerminalSize> terminal_size(int fd);

/// What the signal handlers reported since the last call (each flag is cleared on read).
struct PendingSignals {
  bool quit = false;     ///< SIGINT, SIGTERM or SIGHUP
  bool resized = false;  ///< SIGWINCH
  bool suspend = false;  ///< SIGTSTP (Ctrl-Z)
};

class FullScreen {
 public:
  /// Enters the alternate screen on `out_fd`, hides the cursor, turns off echo and line
  /// buffering on `in_fd` when it is a terminal (signals stay on: Ctrl-C sends SIGINT), and
  /// installs the signal handlers. Returns nullptr with `error` set when `out_fd` is not a
  /// terminal.
  static std::unique_ptr<FullScreen> enter(int in_fd, int out_fd, std::string* error);
  ~FullScreen();
  FullScreen(const FullScreen&) = delete;
  FullScreen& operator=(const FullScreen&) = delete;

  /// Puts the terminal back as it was (idempotent).
  void restore();

  /// Writes all of `text` to the terminal (retrying short writes and EINTR).
  void write(std::string_view text) const;

  /// Draws `lines` from the top-left corner, clearing the rest of each line and the screen
  /// below, in one write.
  void draw(const std::vector<std::string>& lines) const;

  /// Waits up to `timeout` for input or a signal; returns the bytes typed (maybe none).
  std::string wait_for_input(std::chrono::milliseconds timeout);

  /// Signals received since the last call.
  PendingSignals take_signals();

  /// Handles Ctrl-Z: restores the terminal, stops the process, and on SIGCONT enters the
  /// full screen again.
  void suspend();

 private:
  FullScreen(int in_fd, int out_fd) : in_fd_(in_fd), out_fd_(out_fd) {}
  void setup();

  int in_fd_;
  int out_fd_;
  bool input_open_ = true;
};

}  // namespace gpumon::cli
