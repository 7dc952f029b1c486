// SPDX-License-Identifier: MIT
#include "cli/watch_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <csignal>

namespace gpumon::cli {
namespace {

// The key a CSI or SS3 sequence's final byte (and number, for "ESC [ 5 ~") names.
KeyCode sequence_key(char final, int number) {
  switch (final) {
    case 'A': return KeyCode::kUp;
    case 'B': return KeyCode::kDown;
    case 'H': return KeyCode::kHome;
    case 'F': return KeyCode::kEnd;
    case '~':
      switch (number) {
        case 1:
        case 7: return KeyCode::kHome;
        case 4:
        case 8: return KeyCode::kEnd;
        case 5: return KeyCode::kPageUp;
        case 6: return KeyCode::kPageDown;
        default: return KeyCode::kOther;
      }
    default: return KeyCode::kOther;
  }
}

// Index of the selected row in `lines`, if listed.
std::optional<std::size_t> selected_index(const WatchUi& ui,
                                          const std::vector<ProcessLine>& lines) {
  if (!ui.selected) return std::nullopt;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i].key() == ui.selected) return i;
  return std::nullopt;
}

// Moves the selection `step` process rows (launcher lines are skipped); from no selection,
// down selects the first row and up the last (Home and End: the first and the last).
void move_selection(WatchUi& ui, const std::vector<ProcessLine>& lines, long step) {
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i].row) rows.push_back(i);
  if (rows.empty()) return;
  const auto at = selected_index(ui, lines);
  long pos = -1;
  if (at) pos = static_cast<long>(std::find(rows.begin(), rows.end(), *at) - rows.begin());
  const long n = static_cast<long>(rows.size());
  long next = pos < 0 ? (step > 0 ? step - 1 : n + step) : pos + step;
  next = std::clamp(next, 0L, n - 1);
  ui.selected = lines[rows[static_cast<std::size_t>(next)]].key();
}

void ask_to_signal(WatchUi& ui, const std::vector<ProcessLine>& lines, int signal) {
  const auto at = selected_index(ui, lines);
  if (!at) {
    ui.message = "Select a process first (arrow keys or j/k).";
    return;
  }
  const ProcessRow& p = *lines[*at].row;
  if (p.host.visibility != host::Visibility::kVisible) {
    ui.message =
        fmt::format("PID {} is not a process gpumon can see here: not signalled.", p.gpu.pid);
    return;
  }
  ui.pending =
      SignalRequest{*ui.selected, signal,
                    p.host.command_line ? *p.host.command_line : std::string(), p.host.start_ticks};
  ui.mode = WatchUi::Mode::kConfirm;
}

void cycle_gpu(ProcessViewState& s, const std::vector<unsigned>& gpus) {
  if (gpus.empty()) return;
  if (!s.gpu) {
    s.gpu = gpus.front();
    return;
  }
  const auto it = std::find(gpus.begin(), gpus.end(), *s.gpu);
  if (it == gpus.end() || it + 1 == gpus.end()) {
    s.gpu.reset();
  } else {
    s.gpu = *(it + 1);
  }
}

// Whether `text` ends inside a UTF-8 character (its first byte there, not all the rest).
bool unfinished_utf8(const std::string& text) {
  std::size_t continuation = 0, i = text.size();
  while (i > 0 && (static_cast<unsigned char>(text[i - 1]) & 0xC0) == 0x80 && continuation < 3)
    --i, ++continuation;
  if (i == 0) return false;
  const auto lead = static_cast<unsigned char>(text[i - 1]);
  const std::size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  return continuation + 1 < length;
}

// G: the GPU typed by its index (with 64 GPUs, g would take up to 64 presses). Enter on
// nothing shows all GPUs; an index not in the snapshot is refused with the range.
void gpu_prompt_key(WatchUi& ui, const Key& key, const std::vector<unsigned>& gpus) {
  if (key.code == KeyCode::kEscape) {
    ui.mode = WatchUi::Mode::kNormal;
  } else if (key.code == KeyCode::kBackspace) {
    if (!ui.gpu_typed.empty()) ui.gpu_typed.pop_back();
  } else if (key.code == KeyCode::kChar && key.ch >= '0' && key.ch <= '9') {
    if (ui.gpu_typed.size() < 5) ui.gpu_typed += key.ch;
  } else if (key.code == KeyCode::kEnter) {
    ui.mode = WatchUi::Mode::kNormal;
    ui.gpu_offset = 0;
    if (ui.gpu_typed.empty()) {
      ui.procs.gpu.reset();
      return;
    }
    const auto index = static_cast<unsigned>(std::stoul(ui.gpu_typed));
    if (std::find(gpus.begin(), gpus.end(), index) != gpus.end()) {
      ui.procs.gpu = index;
    } else if (gpus.empty()) {
      ui.message = fmt::format("No GPU {}: no GPUs here.", index);
    } else {
      ui.message = fmt::format("No GPU {} here (GPUs {}-{}).", index,
                               *std::min_element(gpus.begin(), gpus.end()),
                               *std::max_element(gpus.begin(), gpus.end()));
    }
  }
}

void erase_last_char(std::string& text) {
  while (!text.empty()) {
    const auto c = static_cast<unsigned char>(text.back());
    text.pop_back();
    if ((c & 0xC0) != 0x80) break;  // stop after the first byte of a UTF-8 sequence
  }
}

}  // namespace

std::vector<Key> decode_keys(std::string_view bytes, std::string* unfinished) {
  std::vector<Key> keys;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (c == '\x1b') {
      const bool introducer = i + 1 < bytes.size() && (bytes[i + 1] == '[' || bytes[i + 1] == 'O');
      if (introducer) {
        std::size_t j = i + 2;
        int number = 0;
        while (j < bytes.size() && ((bytes[j] >= '0' && bytes[j] <= '9') || bytes[j] == ';')) {
          if (bytes[j] != ';' && number < 1000) number = number * 10 + (bytes[j] - '0');
          ++j;
        }
        if (j < bytes.size()) {
          keys.push_back({sequence_key(bytes[j], number), 0});
          i = j;
          continue;
        }
      }
      // The read ended inside what may be a sequence ("ESC", "ESC [", "ESC [ 5"): the caller
      // reads again before deciding.
      if (unfinished != nullptr && (introducer || i + 1 == bytes.size()) && bytes.size() - i < 16) {
        *unfinished = std::string(bytes.substr(i));
        return keys;
      }
      keys.push_back({KeyCode::kEscape, 0});
    } else if (c == '\r' || c == '\n') {
      keys.push_back({KeyCode::kEnter, 0});
    } else if (c == '\x7f' || c == '\b') {
      keys.push_back({KeyCode::kBackspace, 0});
    } else if (static_cast<unsigned char>(c) >= 0x20) {
      keys.push_back({KeyCode::kChar, c});
    } else {
      keys.push_back({KeyCode::kOther, c});
    }
  }
  return keys;
}

UiAction handle_key(WatchUi& ui, const Key& key, const std::vector<ProcessLine>& lines,
                    const std::vector<unsigned>& gpus, std::size_t gpus_per_page) {
  UiAction action;
  if (ui.mode == WatchUi::Mode::kConfirm) {
    if (key.code == KeyCode::kChar && (key.ch == 'y' || key.ch == 'Y')) {
      action.send = std::move(ui.pending);
    } else {
      ui.message = "Not sent.";
    }
    ui.pending.reset();
    ui.mode = WatchUi::Mode::kNormal;
    return action;
  }
  if (ui.mode == WatchUi::Mode::kFilter) {
    // The list follows each key typed; Enter keeps the filter, Escape clears it.
    if (key.code == KeyCode::kEnter) {
      ui.mode = WatchUi::Mode::kNormal;
    } else if (key.code == KeyCode::kEscape) {
      ui.procs.filter.clear();
      ui.mode = WatchUi::Mode::kNormal;
    } else if (key.code == KeyCode::kBackspace) {
      erase_last_char(ui.procs.filter);
    } else if (key.code == KeyCode::kChar) {
      // At most about 200 bytes, cut only before a character's first byte: a continuation
      // byte goes on only while the character it continues is unfinished.
      const bool continues = (static_cast<unsigned char>(key.ch) & 0xC0) == 0x80;
      if (continues ? unfinished_utf8(ui.procs.filter) : ui.procs.filter.size() < 200)
        ui.procs.filter += key.ch;
    }
    return action;
  }
  if (ui.mode == WatchUi::Mode::kGpu) {
    gpu_prompt_key(ui, key, gpus);
    return action;
  }
  ui.message.clear();
  const std::size_t page = std::max<std::size_t>(gpus_per_page, 1);
  switch (key.code) {
    case KeyCode::kUp: move_selection(ui, lines, -1); break;
    case KeyCode::kDown: move_selection(ui, lines, 1); break;
    case KeyCode::kHome: move_selection(ui, lines, -static_cast<long>(lines.size())); break;
    case KeyCode::kEnd: move_selection(ui, lines, static_cast<long>(lines.size())); break;
    case KeyCode::kPageUp: ui.gpu_offset = ui.gpu_offset > page ? ui.gpu_offset - page : 0; break;
    case KeyCode::kPageDown:
      if (ui.gpu_offset + page < gpus.size()) ui.gpu_offset += page;
      break;
    case KeyCode::kEscape: ui.selected.reset(); break;
    case KeyCode::kChar:
      switch (key.ch) {
        case 'q':
        case 'Q': action.quit = true; break;
        case 'k': move_selection(ui, lines, -1); break;
        case 'j': move_selection(ui, lines, 1); break;
        case 's': ui.procs.sort = next_sort(ui.procs.sort); break;
        case 'r': ui.procs.reverse = !ui.procs.reverse; break;
        case '/': ui.mode = WatchUi::Mode::kFilter; break;
        case 'g': cycle_gpu(ui.procs, gpus), ui.gpu_offset = 0; break;
        case 'G':
          ui.mode = WatchUi::Mode::kGpu;
          ui.gpu_typed.clear();
          break;
        case 't': ui.procs.tree = !ui.procs.tree; break;
        case 'T': ask_to_signal(ui, lines, SIGTERM); break;
        case 'K': ask_to_signal(ui, lines, SIGKILL); break;
        default: break;
      }
      break;
    default: break;
  }
  return action;
}

StyledLine footer_line(const WatchUi& ui, bool unicode) {
  if (ui.mode == WatchUi::Mode::kConfirm && ui.pending) {
    const SignalRequest& r = *ui.pending;
    // The keys before the command line, which the window may cut.
    return StyledLine(fmt::format(" Send {} to PID {}? y: send, other keys: cancel.  {} ",
                                  r.signal == SIGKILL ? "SIGKILL" : "SIGTERM", r.target.pid,
                                  r.command.empty() ? "(no command line)" : r.command),
                      Tone::kBanner);
  }
  if (ui.mode == WatchUi::Mode::kFilter) {
    return StyledLine(fmt::format(" Filter (user, command, PID): {}_   Enter: keep  Esc: clear ",
                                  ui.procs.filter),
                      Tone::kBanner);
  }
  if (ui.mode == WatchUi::Mode::kGpu) {
    return StyledLine(
        fmt::format(" GPU to show (index): {}_   Enter: show (nothing: all)  Esc: cancel ",
                    ui.gpu_typed),
        Tone::kBanner);
  }
  if (!ui.message.empty()) return StyledLine(" " + ui.message, Tone::kWarn);
  const ProcessViewState& s = ui.procs;
  StyledLine line;
  auto item = [&](std::string_view key, const std::string& what) {
    line.add(" ").add(key, Tone::kBold).add(" " + what + " ");
  };
  item("q", "quit");
  item(unicode ? "\xE2\x86\x91\xE2\x86\x93" : "j/k", "select");
  item("s", fmt::format("sort: {}{}", sort_name(s.sort), s.reverse ? " (reversed)" : ""));
  item("r", "reverse");
  item("/", s.filter.empty() ? "filter" : "filter: " + s.filter);
  item("g/G", s.gpu ? fmt::format("GPU {}", *s.gpu) : "GPU: all");
  item("t", s.tree ? "tree: on" : "tree");
  item("T/K", "term/kill");
  item("PgUp/PgDn", "GPUs");
  return line;
}

}  // namespace gpumon::cli
