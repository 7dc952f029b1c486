// SPDX-License-Identifier: MIT
// The live view's keyboard: the bytes a terminal sends, decoded into keys (arrows, page and
// home/end in both the CSI and SS3 forms terminals and tmux send), and what each key does to
// the view's state. Pure, so every key has a unit test; the watch loop reads the bytes and
// carries out what comes back (quit, or send a signal after the user confirmed it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/process_view.h"
#include "cli/styled_line.h"

namespace gpumon::cli {

enum class KeyCode : unsigned char {
  kChar,
  kUp,
  kDown,
  kPageUp,
  kPageDown,
  kHome,
  kEnd,
  kEnter,
  kEscape,
  kBackspace,
  kOther
};

struct Key {
  KeyCode code = KeyCode::kOther;
  char ch = 0;  ///< for kChar: the byte (UTF-8 text arrives a byte at a time)
};

/// The keys in `bytes`. A lone ESC (not followed by '[' or 'O') is the Escape key. With
/// `unfinished`, bytes that end inside what may be an escape sequence (a terminal's arrow key
/// split over two reads) are not decoded but left there, to be put before the next read's bytes
/// (or decoded without `unfinished` when nothing more comes).
std::vector<Key> decode_keys(std::string_view bytes, std::string* unfinished = nullptr);

/// A signal the user asked for and confirmed, and what identifies the process it is for: the
/// loop sends it only when the PID still runs the process the row showed (the start time read
/// with that row, and its command line).
struct SignalRequest {
  ProcessKey target;
  int signal = 0;
  std::string command;
  std::optional<std::uint64_t> start_ticks;  ///< as the row's sample read it; none: not sent
};

struct WatchUi {
  enum class Mode : unsigned char { kNormal, kFilter, kConfirm, kGpu };
  ProcessViewState procs;
  std::optional<ProcessKey> selected;
  std::size_t gpu_offset = 0;  ///< the first GPU block shown (PgUp/PgDn)
  Mode mode = Mode::kNormal;
  std::optional<SignalRequest> pending;  ///< awaiting y/n
  std::string message;                   ///< the last action's outcome, until the next key
  std::string gpu_typed;                 ///< kGpu: the digits typed so far
};

struct UiAction {
  bool quit = false;
  std::optional<SignalRequest> send;  ///< confirmed: send it now
};

/// Applies `key`. `lines` are the process lines as listed now (arrange_processes), `gpus` the
/// GPU indices in the snapshot, `gpus_per_page` how many GPU blocks the last frame showed.
UiAction handle_key(WatchUi& ui, const Key& key, const std::vector<ProcessLine>& lines,
                    const std::vector<unsigned>& gpus, std::size_t gpus_per_page);

/// The bottom line: the prompt being answered, else the last message, else the keys with the
/// current sort, filter and GPU.
StyledLine footer_line(const WatchUi& ui, bool unicode);

}  // namespace gpumon::cli
