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
  std::size_t pid_end = 13, user = 15, gpu_mem_end = 0, cpu_end = 0, rss_end = 0, command = 0;
  explicit Columns(std::size_t user_width) {
    gpu_mem_end = user + user_width + 10;
    cpu_end = gpu_mem_end + 10;
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

StyledLine row(const ProcessRow& p, const Columns& c) {
  StyledLine line;
  line.add_right(fmt::format("{}", p.gpu.gpu_index), 3);
  right_at(line, c.pid_end, fmt::format("{}", p.gpu.pid), Tone::kPlain);
  line.pad_to(c.user);
  const std::string user = user_text(p);
  line.add(fit_width(user, kMaxUserWidth), p.host.user ? Tone::kPlain : Tone::kDim);
  reading_at(line, c.gpu_mem_end, p.gpu.used_memory_bytes, short_bytes);
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
  if (p.host.command_line) {
    line.add(p.host.command_line.value());
  } else if (p.gpu.name) {
    line.add(p.gpu.name.value());  // NVML's name when /proc refused the command line
  } else {
    line.add(missing_token(p.host.command_line.why()), Tone::kDim);
  }
  return line;
}

}  // namespace

std::vector<StyledLine> process_table(const Snapshot& snap, std::size_t max_rows) {
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
  const Columns c(user_width);
  StyledLine head;
  head.add("GPU", Tone::kBold);
  right_at(head, c.pid_end, "PID", Tone::kBold);
  head.pad_to(c.user).add("User", Tone::kBold);
  right_at(head, c.gpu_mem_end, "GPU mem", Tone::kBold);
  // A single reading can only give the average since each process started: say so.
  right_at(head, c.cpu_end, any_since_start && !any_interval ? "avg CPU%" : "CPU %", Tone::kBold);
  right_at(head, c.rss_end, "RSS", Tone::kBold);
  head.pad_to(c.command).add("Command", Tone::kBold);
  out.push_back(std::move(head));

  if (snap.processes.empty()) out.emplace_back("No running GPU processes.", Tone::kDim);
  const std::size_t shown =
      max_rows == 0 ? snap.processes.size() : std::min(max_rows, snap.processes.size());
  for (std::size_t i = 0; i < shown; ++i) out.push_back(row(snap.processes[i], c));
  if (shown < snap.processes.size()) {
    out.emplace_back(fmt::format("... {} more", snap.processes.size() - shown), Tone::kDim);
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
