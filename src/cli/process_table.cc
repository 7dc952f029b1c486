// SPDX-License-Identifier: MIT
#include "cli/process_table.h"

#include <fmt/format.h>

#include <algorithm>

#include "cli/format_units.h"

namespace gpumon::cli {
namespace {

using host::CpuWindow;
using host::Visibility;

constexpr std::size_t kMaxUserWidth = 12;

struct Columns {
  std::size_t pid_end = 13, user = 15, gpu_mem_end = 0, sm_end = 0, mem_util_end = 0, cpu_end = 0,
              rss_end = 0, command = 0;
  bool util = false;
  Columns(std::size_t user_width, bool util_columns) : util(util_columns) {
    gpu_mem_end = user + user_width + 10;
    sm_end = gpu_mem_end + (util ? 6 : 0);
    mem_util_end = sm_end + (util ? 7 : 0);
    cpu_end = mem_util_end + 10;
    rss_end = cpu_end + 10;
    command = rss_end + 2;
  }
};

// Right-aligns `text` to end at column `end`, at least one space after what is on the line.
void right_at(StyledLine& line, std::size_t end, std::string_view text, Tone tone) {
  const std::size_t w = display_width(text);
  const std::size_t start = end > w ? end - w : 0;
  if (!line.empty() && line.width() >= start) line.add(" ");
  line.pad_to(start);
  line.add(text, tone);
}

template <typename T, typename Fn>
void reading_at(StyledLine& line, std::size_t end, const Reading<T>& r, Fn format) {
  if (r) {
    right_at(line, end, format(r.value()), Tone::kPlain);
  } else {
    right_at(line, end, missing_token(r.why()), Tone::kDim);
  }
}

std::string user_text(const ProcessRow& p) {
  if (p.host.visibility != Visibility::kVisible) return "-";
  return reading_text(p.host.user, [](const std::string& u) { return u; });
}

// The tree view's indent before the command: "└─ " one level down, two spaces more per level.
std::string branch(std::size_t depth, bool unicode) {
  if (depth == 0) return "";
  return std::string(2 * (depth - 1), ' ') + (unicode ? "\u2514\u2500 " : "`- ");
}

StyledLine row(const ProcessRow& p, const Columns& c, const std::string& indent) {
  StyledLine line;
  line.add_right(fmt::format("{}", p.gpu.gpu_index), 3);
  right_at(line, c.pid_end, fmt::format("{}", p.gpu.pid), Tone::kPlain);
  line.pad_to(c.user);
  const std::string user = user_text(p);
  line.add(fit_width(user, kMaxUserWidth), p.host.user ? Tone::kPlain : Tone::kDim);
  reading_at(line, c.gpu_mem_end, p.gpu.used_memory_bytes, short_bytes);
  if (c.util) {
    auto pct = [](unsigned v) { return fmt::format("{}", v); };
    reading_at(line, c.sm_end, p.gpu.sm_util_pct, pct);
    reading_at(line, c.mem_util_end, p.gpu.mem_util_pct, pct);
  }
  const bool visible = p.host.visibility == Visibility::kVisible;
  if (!visible) {
    right_at(line, c.cpu_end, "-", Tone::kDim);
    right_at(line, c.rss_end, "-", Tone::kDim);
    line.pad_to(c.command);
    line.add(p.host.visibility == Visibility::kHidden ? "[hidden by hidepid]" : "[not visible]",
             Tone::kDim);
    if (p.gpu.name) line.add(" ").add(p.gpu.name.value());
    return line;
  }
  reading_at(line, c.cpu_end, p.host.cpu_percent,
             [](double v) { return fmt::format("{:.1f}", v); });
  reading_at(line, c.rss_end, p.host.rss_bytes, short_bytes);
  line.pad_to(c.command);
  line.add(indent, Tone::kDim);
  if (const std::string tag = job::job_tag(p.host.job); !tag.empty())
    line.add("[" + tag + "] ", Tone::kDim);
  if (p.host.command_line) {
    line.add(p.host.command_line.value());
  } else if (p.gpu.name) {
    line.add(p.gpu.name.value());  // NVML's name when /proc refused the command line
  } else {
    line.add(missing_token(p.host.command_line.why()), Tone::kDim);
  }
  return line;
}

// A launcher in the tree view: the process the ranks below it were started by.
StyledLine launcher_row(const host::ProcessBrief& b, const Columns& c) {
  StyledLine line;
  line.add_right("-", 3, Tone::kDim);
  right_at(line, c.pid_end, fmt::format("{}", b.pid), Tone::kDim);
  line.pad_to(c.command);
  line.add(b.command, Tone::kDim);
  return line;
}

}  // namespace

std::vector<StyledLine> process_table(const Snapshot& snap, std::size_t max_rows,
                                      const ProcessTableView& view) {
  std::vector<StyledLine> out;
  out.emplace_back("Processes", Tone::kBold);
  std::size_t user_width = 4;
  bool any_since_start = false;
  bool any_interval = false;
  bool any_not_visible = false;
  for (const ProcessRow& p : snap.processes) {
    user_width = std::max(user_width, std::min(display_width(user_text(p)), kMaxUserWidth));
    if (p.host.cpu_percent) {
      (p.host.cpu_window == CpuWindow::kInterval ? any_interval : any_since_start) = true;
    }
    if (p.host.visibility == Visibility::kNotVisible ||
        p.host.visibility == Visibility::kOtherProcess) {
      any_not_visible = true;
    }
  }
  const Columns c(user_width, view.util_columns);
  StyledLine head;
  head.add("GPU", Tone::kBold);
  right_at(head, c.pid_end, "PID", Tone::kBold);
  head.pad_to(c.user).add("User", Tone::kBold);
  right_at(head, c.gpu_mem_end, "GPU mem", Tone::kBold);
  if (c.util) {
    right_at(head, c.sm_end, "SM %", Tone::kBold);
    right_at(head, c.mem_util_end, "mem %", Tone::kBold);
  }
  // A single reading can only give the average since each process started: say so.
  right_at(head, c.cpu_end, any_since_start && !any_interval ? "avg CPU%" : "CPU %", Tone::kBold);
  right_at(head, c.rss_end, "RSS", Tone::kBold);
  head.pad_to(c.command).add("Command", Tone::kBold);
  out.push_back(std::move(head));

  std::vector<ProcessLine> plain;
  if (view.lines == nullptr)
    for (const ProcessRow& p : snap.processes) plain.push_back({&p, nullptr, 0});
  const std::vector<ProcessLine>& lines = view.lines != nullptr ? *view.lines : plain;
  if (snap.processes.empty()) {
    out.emplace_back("No running GPU processes.", Tone::kDim);
  } else if (lines.empty()) {
    out.emplace_back("No process matches the filter.", Tone::kDim);
  }
  const std::size_t shown = max_rows == 0 ? lines.size() : std::min(max_rows, lines.size());
  std::size_t first = 0;
  for (std::size_t i = 0; view.selected && i < lines.size(); ++i)
    if (lines[i].key() == view.selected && i >= shown) first = i + 1 - shown;
  for (std::size_t i = first; i < first + shown; ++i) {
    const ProcessLine& l = lines[i];
    if (l.row == nullptr) {
      out.push_back(launcher_row(*l.launcher, c));
      continue;
    }
    StyledLine r = row(*l.row, c, branch(l.depth, view.unicode));
    if (view.selected && l.key() == view.selected)
      r = r.pad_to(view.width).with_tone(Tone::kBanner);
    out.push_back(std::move(r));
  }
  if (shown < lines.size()) {
    const std::size_t below = lines.size() - shown - first;
    out.emplace_back(first == 0   ? fmt::format("... {} more", below)
                     : below == 0 ? fmt::format("... {} above", first)
                                  : fmt::format("... {} above, {} more", first, below),
                     Tone::kDim);
  }
  for (const GpuSnapshot& g : snap.gpus) {
    if (g.process_count || g.process_count.why() == Missing::kGpuLost) continue;
    out.emplace_back(
        fmt::format("GPU {}: process list {}", g.info.index, to_string(g.process_count.why())),
        Tone::kDim);
  }
  if (any_not_visible) {
    out.emplace_back(
        "[not visible]: no such PID in this /proc: the process exited, or gpumon runs in a "
        "container without --pid=host (NVML reports host PIDs)",
        Tone::kDim);
  }
  return out;
}

}  // namespace gpumon::cli
