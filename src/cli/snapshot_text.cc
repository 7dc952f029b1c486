// SPDX-License-Identifier: MIT
#include "cli/snapshot_text.h"

#include <fmt/format.h>

#include <algorithm>

#include "cli/format_units.h"
#include "cli/process_table.h"
#include "cli/rank_table.h"

namespace gpumon::cli {
namespace {

constexpr std::size_t kIndent = 5;  // under the name column
constexpr std::size_t kBarCells = 10;
constexpr std::size_t kMaxNameWidth = 24;

// Column starts of the GPU table, from the widest name.
struct Columns {
  std::size_t name = 5, util = 0, mem_util = 0, memory = 0, mem_pct = 0, bar = 0, temp = 0, hbm = 0,
              power = 0, end = 0;
  explicit Columns(std::size_t name_width) {
    util = name + name_width + 2;
    mem_util = util + 5 + 2;
    memory = mem_util + 7 + 2;
    mem_pct = memory + 17 + 2;
    bar = mem_pct + 5 + 1;
    temp = bar + kBarCells + 2 + 2;
    hbm = temp + 4 + 2;
    power = hbm + 4 + 2;
    end = power + 13;
  }
};

// Right-aligns `cell` to end at `column_end`, keeping at least one space after what is
// already on the line when a value is wider than its column.
void add_right_at(StyledLine& line, std::size_t column_end, const Cell& cell) {
  const std::size_t w = display_width(cell.text);
  const std::size_t start = column_end > w ? column_end - w : 0;
  if (!line.empty() && line.width() >= start) line.add(" ");
  line.pad_to(start);
  line.add(cell.text, cell.tone);
}

StyledLine heading(const Columns& c) {
  StyledLine h;
  h.add("GPU", Tone::kBold).pad_to(c.name).add("Name", Tone::kBold);
  add_right_at(h, c.mem_util - 2, {"Util", Tone::kBold});
  add_right_at(h, c.memory - 2, {"MemUtil", Tone::kBold});
  h.pad_to(c.memory).add("Memory used / total", Tone::kBold);
  add_right_at(h, c.hbm - 2, {"Temp", Tone::kBold});
  add_right_at(h, c.power - 2, {"HBM", Tone::kBold});
  add_right_at(h, c.end, {"Power / limit", Tone::kBold});
  return h;
}

StyledLine first_line(const GpuSnapshot& g, const Columns& c, const Thresholds& t) {
  const DeviceSample& s = g.sample;
  StyledLine line;
  line.add_right(fmt::format("{}", g.info.index), 3).pad_to(c.name);
  line.add(fit_width(gpu_name(g.info), kMaxNameWidth));
  if (s.lost) {
    return line.pad_to(c.util).append(lost_gpu_cells(g));
  }
  if (g.info.open_error) {  // listed, but NVML would not open it
    line.pad_to(c.util).add("CANNOT OPEN", Tone::kBad);
    line.add("  (" + *g.info.open_error + ")", Tone::kDim);
    return line;
  }
  add_right_at(line, c.mem_util - 2, percent_cell(s.utilization_gpu_pct));
  add_right_at(line, c.memory - 2, percent_cell(s.utilization_memory_pct));
  add_right_at(line, c.mem_pct - 2, memory_cell(s, g.info));
  const Cell pct = memory_percent_cell(s, g.info, t);
  add_right_at(line, c.bar - 1, pct);
  const std::optional<double> f = memory_fraction(s, g.info);
  line.pad_to(c.bar).add(f ? bar(*f, kBarCells) : std::string(kBarCells + 2, ' '), pct.tone);
  add_right_at(line, c.hbm - 2,
               temperature_cell(s.temperature_gpu_c, t.gpu_temp_warn_c, t.gpu_temp_bad_c));
  add_right_at(line, c.power - 2,
               temperature_cell(s.temperature_memory_c, t.hbm_temp_warn_c, t.hbm_temp_bad_c));
  add_right_at(line, c.end, power_cell(s));
  return line;
}

StyledLine second_line(const GpuSnapshot& g) {
  const DeviceSample& s = g.sample;
  StyledLine line;
  line.pad_to(kIndent);
  const Cell p = pstate_cell(s.pstate);
  line.add(p.text, p.tone).pad_to(kIndent + 4);
  const Cell sm = clock_cell(s.sm_clock_mhz, g.info.max_sm_clock_mhz);
  line.add("SM ").add(sm.text, sm.tone).pad_to(kIndent + 4 + 20);
  const Cell mem = clock_cell(s.mem_clock_mhz, g.info.max_mem_clock_mhz);
  line.add("mem ").add(mem.text, mem.tone).pad_to(kIndent + 4 + 20 + 21);
  line.append(ecc_cells(s)).pad_to(kIndent + 4 + 20 + 21 + 22);
  line.append(throttle_cells(s));
  if (s.sm_active_ratio) {  // sampled views (watch) only: GPM needs two samples
    const Cell active = ratio_percent_cell(s.sm_active_ratio);
    line.add("   SM active ").add(active.text, active.tone);
  }
  return line;
}

StyledLine id_line(const GpuSnapshot& g, const TextOptions& options) {
  StyledLine line;
  line.pad_to(kIndent);
  auto text = [](const Reading<std::string>& r) {
    return reading_text(r, [](const std::string& v) { return v; });
  };
  if (options.show_uuid) line.add("uuid ", Tone::kDim).add(text(g.info.uuid));
  if (options.show_uuid && options.show_serial) line.add("  ");
  if (options.show_serial) line.add("serial ", Tone::kDim).add(text(g.info.serial));
  return line;
}

}  // namespace

StyledLine simulated_banner(const SystemInfo& system) {
  return StyledLine(fmt::format("SIMULATED GPUs \xE2\x80\x94 scenario \"{}\" (gpumon fake NVML; "
                                "not real hardware)",
                                system.simulated_scenario),
                    Tone::kBanner);
}

StyledLine header_line(const Snapshot& snap, const std::string& version) {
  const SystemInfo& sys = snap.system;
  StyledLine line;
  line.add("gpumon " + version, Tone::kBold);
  line.add("  driver ").add(reading_text(sys.driver_version, [](const std::string& v) {
    return v;
  }));
  line.add("  CUDA ").add(reading_text(sys.cuda_driver_version, cuda_version_text));
  line.add("  host ").add(snap.hostname.empty() ? std::string("N/A") : snap.hostname);
  line.add("  ").add(local_time_text(snap.taken_at));
  return line;
}

std::vector<StyledLine> gpu_table(const Snapshot& snap, const TextOptions& options) {
  std::vector<StyledLine> out;
  if (snap.gpus.empty()) {
    out.emplace_back("No NVIDIA GPUs found.", Tone::kWarn);
    return out;
  }
  std::size_t name_width = 4;
  for (const GpuSnapshot& g : snap.gpus) {
    name_width = std::max(name_width, std::min(display_width(gpu_name(g.info)), kMaxNameWidth));
  }
  const Columns columns(name_width);
  out.push_back(heading(columns));
  for (const GpuSnapshot& g : snap.gpus) {
    out.push_back(first_line(g, columns, options.thresholds));
    if (!g.sample.lost && !g.info.open_error) out.push_back(second_line(g));
    if (options.show_uuid || options.show_serial) out.push_back(id_line(g, options));
  }
  return out;
}

std::string format_snapshot_text(const Snapshot& snap, const TextOptions& options) {
  std::vector<StyledLine> lines;
  if (!snap.system.simulated_scenario.empty()) lines.push_back(simulated_banner(snap.system));
  lines.push_back(header_line(snap, options.version));
  lines.emplace_back();
  for (StyledLine& l : gpu_table(snap, options)) lines.push_back(std::move(l));
  lines.emplace_back();
  if (std::vector<StyledLine> ranks = rank_table(snap); !ranks.empty()) {
    for (StyledLine& l : ranks) lines.push_back(std::move(l));
    lines.emplace_back();
  }
  for (StyledLine& l : process_table(snap)) lines.push_back(std::move(l));
  if (!snap.findings.empty()) {  // what one reading supports (snapshot_findings.h)
    lines.emplace_back();
    lines.emplace_back().add("Findings", Tone::kBold);
    for (const SnapshotFinding& f : snap.findings) {
      StyledLine& l = lines.emplace_back();
      l.add("  ");
      l.add(f.severity, f.severity == "critical" ? Tone::kBad : Tone::kWarn);
      l.add("  " + f.id + ": " + f.summary);
    }
  }
  std::string out;
  for (const StyledLine& l : lines) {
    out += l.render(options.style, options.width);
    out += '\n';
  }
  return out;
}

}  // namespace gpumon::cli
