// SPDX-License-Identifier: MIT
#include "cli/watch_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "cli/format_units.h"
#include "cli/process_table.h"
#include "cli/rank_table.h"
#include "cli/snapshot_text.h"
#include "util/ascii_lower.h"

namespace gpumon::cli {
namespace {

constexpr std::size_t kMaxSpark = 60;
constexpr std::size_t kMaxNameWidth = 24;

// "  CPU 35 % of 64  RAM 120.3 / 503.5 GiB": the host, whose DataLoader workers may be what
// the GPUs wait for.
std::string host_usage_text(const std::optional<host::HostUsage>& u) {
  if (!u) return "";
  std::string out =
      "  CPU " + reading_text(u->cpu_pct, [](double v) { return fmt::format("{:.0f} %", v); });
  if (u->cpus > 0) out += fmt::format(" of {}", u->cpus);
  if (u->mem_used_bytes && u->mem_total_bytes)
    out += fmt::format("  RAM {} / {} GiB", gib(*u->mem_used_bytes), gib(*u->mem_total_bytes));
  return out;
}

// What matters most comes first, since a narrow window cuts the end: the time (it proves the
// view is live), the refresh interval, the host and its load (how to quit is on the last line).
StyledLine title_line(const Snapshot& snap, const ViewOptions& o, Tone tone) {
  const std::string driver =
      reading_text(snap.system.driver_version, [](const std::string& v) { return v; });
  const std::string cuda = reading_text(snap.system.cuda_driver_version, cuda_version_text);
  return StyledLine(fmt::format(" gpumon watch  {}  every {:g} s  host {}{}  driver {}  CUDA {}  "
                                "gpumon {}",
                                local_time_text(snap.taken_at), o.interval_s, snap.hostname,
                                host_usage_text(snap.host_usage), driver, cuda, o.version),
                    tone);
}

void add_cell(StyledLine& line, const Cell& c, std::size_t right_width = 0) {
  if (right_width > 0) {
    line.add_right(c.text, right_width, c.tone);
  } else {
    line.add(c.text, c.tone);
  }
}

// "GPU 0  NVIDIA H200  P0  62°C HBM 70°C  612 / 700 W  SM 1980/1980 MHz  mem 3201/3201 MHz"
StyledLine block_head(const GpuSnapshot& g, std::size_t name_width, const Thresholds& t) {
  const DeviceSample& s = g.sample;
  StyledLine line;
  line.add(fmt::format("GPU {:<2} ", g.info.index), Tone::kBold);
  line.add(fit_width(gpu_name(g.info), kMaxNameWidth), Tone::kBold).pad_to(7 + name_width + 2);
  if (s.lost) return line.append(lost_gpu_cells(g));
  if (s.stale) return line.append(stale_gpu_cells(s));
  if (g.info.open_error) {
    line.add("CANNOT OPEN", Tone::kBad).add("  (" + *g.info.open_error + ")", Tone::kDim);
    return line;
  }
  add_cell(line, pstate_cell(s.pstate));
  line.add("  ");
  add_cell(line, temperature_cell(s.temperature_gpu_c, t.gpu_temp_warn_c, t.gpu_temp_bad_c), 4);
  line.add(" HBM ");
  add_cell(line, temperature_cell(s.temperature_memory_c, t.hbm_temp_warn_c, t.hbm_temp_bad_c), 4);
  line.add("  ");
  add_cell(line, power_cell(s), 13);
  line.add("  SM ");
  add_cell(line, clock_cell(s.sm_clock_mhz, g.info.max_sm_clock_mhz));
  line.add("  mem ");
  add_cell(line, clock_cell(s.mem_clock_mhz, g.info.max_mem_clock_mhz));
  return line;
}

// "  util  98 % ▁▂▃▅▇   mem  50 %  70.2 / 140.4 GiB ▁▁▂▂▃"
StyledLine block_bars(const GpuSnapshot& g, const GpuHistories& h, std::size_t spark,
                      const ViewOptions& o) {
  const DeviceSample& s = g.sample;
  StyledLine line;
  line.add("  util ");
  add_cell(line, percent_cell(s.utilization_gpu_pct), 6);
  line.add(" ").add(sparkline(h.utilization(g.info.index), spark, 100.0, o.unicode), Tone::kGood);
  line.add("   mem ");
  const Cell pct = memory_percent_cell(s, g.info, o.thresholds);
  add_cell(line, pct, 6);
  line.add(" ");
  add_cell(line, memory_cell(s, g.info), 17);
  line.add(" ").add(sparkline(h.memory(g.info.index), spark, 100.0, o.unicode),
                    pct.tone == Tone::kPlain ? Tone::kGood : pct.tone);
  return line;
}

// "  mem-util 45 %   SM active 87 %   ECC corr 0 uncorr 0   throttle: power cap". SM activity
// (GPM, Hopper and newer) is the share of SMs busy, which "util" (any kernel running) is not;
// shown where the GPU has it.
StyledLine block_status(const GpuSnapshot& g) {
  StyledLine line;
  line.add("  mem-util ");
  add_cell(line, percent_cell(g.sample.utilization_memory_pct), 5);
  if (g.sample.sm_active_ratio) {
    line.add("   SM active ");
    add_cell(line, ratio_percent_cell(g.sample.sm_active_ratio), 5);
  }
  line.add("   ").append(ecc_cells(g.sample)).add("   ").append(throttle_cells(g.sample));
  return line;
}

// "  PCIe rx 1.2 GiB/s  tx 310 MiB/s": the host<->GPU traffic (a DataLoader's copies, a
// model offloaded to the host), on a line of its own so the lines above keep their width at
// 80 columns; for every GPU that can give it while the source reads it.
bool has_io(const GpuSnapshot& g, const ViewOptions& o) {
  const auto unsupported = [](const Reading<double>& r) {
    return !r && r.why() == Missing::kNotSupported;
  };
  return o.pcie && !g.sample.lost && !g.info.open_error &&
         !(unsupported(g.sample.pcie_rx_bytes_per_s) && unsupported(g.sample.pcie_tx_bytes_per_s));
}

StyledLine block_io(const GpuSnapshot& g) {
  const auto rate = [](const Reading<double>& r) {
    return reading_text(r, [](double v) {
      return short_bytes(static_cast<std::uint64_t>(std::max(0.0, v))) + "/s";
    });
  };
  return StyledLine(fmt::format("  PCIe rx {}  tx {}", rate(g.sample.pcie_rx_bytes_per_s),
                                rate(g.sample.pcie_tx_bytes_per_s)));
}

// The lines of a GPU's block in the full layout.
std::size_t block_lines(const GpuSnapshot& g, const ViewOptions& o) {
  if (g.sample.lost || g.info.open_error) return 1;
  return has_io(g, o) ? 4 : 3;
}

// One line per GPU when its block does not fit.
StyledLine compact_line(const GpuSnapshot& g, const GpuHistories& h, std::size_t spark,
                        const ViewOptions& o) {
  const DeviceSample& s = g.sample;
  StyledLine line;
  line.add(fmt::format("{:>2} ", g.info.index), Tone::kBold);
  if (s.lost) {
    const std::string name = gpu_name(g.info);
    return line.add(name.empty() ? "" : name + "  ", Tone::kBold).append(lost_gpu_cells(g));
  }
  if (s.stale) {
    const std::string name = gpu_name(g.info);
    return line.add(name.empty() ? "" : name + "  ", Tone::kBold).append(stale_gpu_cells(s));
  }
  if (g.info.open_error) return line.add("CANNOT OPEN: " + *g.info.open_error, Tone::kBad);
  add_cell(line, percent_cell(s.utilization_gpu_pct), 6);
  line.add(" ").add(sparkline(h.utilization(g.info.index), spark, 100.0, o.unicode), Tone::kGood);
  line.add(" mem ");
  add_cell(line, memory_percent_cell(s, g.info, o.thresholds), 6);
  line.add(" ").add(sparkline(h.memory(g.info.index), spark, 100.0, o.unicode), Tone::kGood);
  line.add("  ");
  add_cell(line,
           temperature_cell(s.temperature_gpu_c, o.thresholds.gpu_temp_warn_c,
                            o.thresholds.gpu_temp_bad_c),
           4);
  line.add("  ");
  add_cell(line, power_cell(s), 13);
  line.add("  ").append(throttle_cells(s));
  return line;
}

}  // namespace

bool locale_is_utf8(const char* lc_all, const char* lc_ctype, const char* lang) {
  const char* value = nullptr;
  for (const char* v : {lc_all, lc_ctype, lang}) {
    if (v != nullptr && *v != '\0') {
      value = v;
      break;
    }
  }
  if (value == nullptr) return false;
  const std::string lower = util::ascii_lower(value);
  return lower.find("utf-8") != std::string::npos || lower.find("utf8") != std::string::npos;
}

std::vector<std::string> render_watch_frame(const Snapshot& snap, const GpuHistories& history,
                                            const ViewOptions& o, const WatchUi& ui,
                                            const std::vector<ProcessLine>* lines,
                                            FrameLayout* layout) {
  const std::size_t width = std::max<std::size_t>(o.width, 2) - 1;
  // The keys take the last line when there is room for anything else.
  const bool footer = o.height >= 3;
  const std::size_t height = footer ? o.height - 1 : o.height;
  std::vector<StyledLine> out;
  const bool simulated = !snap.system.simulated_scenario.empty();
  if (simulated) out.push_back(simulated_banner(snap.system).pad_to(width));
  out.push_back(title_line(snap, o, simulated ? Tone::kBold : Tone::kBanner).pad_to(width));

  // The GPUs shown: the one the filter names, else all from the page the keys moved to.
  std::vector<const GpuSnapshot*> gpus;
  for (const GpuSnapshot& g : snap.gpus)
    if (!ui.procs.gpu || g.info.index == *ui.procs.gpu) gpus.push_back(&g);
  const std::size_t n = gpus.size();
  const std::size_t header = out.size();
  // Room for the processes title, heading and one row below the GPUs.
  constexpr std::size_t kProcessMin = 4;
  std::size_t block_total = 0;
  for (const GpuSnapshot* g : gpus) block_total += block_lines(*g, o);
  const bool full = height >= header + block_total + kProcessMin;
  std::size_t name_width = 4;
  for (const GpuSnapshot* g : gpus) {
    name_width = std::max(name_width, std::min(display_width(gpu_name(g->info)), kMaxNameWidth));
  }
  if (snap.gpus.empty()) out.emplace_back("No NVIDIA GPUs found.", Tone::kWarn);
  if (ui.procs.gpu && n == 0)
    out.emplace_back(fmt::format("GPU {} is not in this snapshot (g: next GPU)", *ui.procs.gpu),
                     Tone::kWarn);
  std::size_t gpus_shown = n, gpus_per_page = n;
  if (full) {
    // Fixed columns of block_bars: 7 + 6 + 1 + 7 + 6 + 1 + 17 + 1; two sparklines share the rest.
    constexpr std::size_t kFixed = 46;
    const std::size_t spark = std::min(kMaxSpark, width > kFixed + 2 ? (width - kFixed) / 2 : 1);
    for (const GpuSnapshot* g : gpus) {
      out.push_back(block_head(*g, name_width, o.thresholds));
      if (g->sample.lost || g->info.open_error) continue;
      out.push_back(block_bars(*g, history, spark, o));
      out.push_back(block_status(*g));
      if (has_io(*g, o)) out.push_back(block_io(*g));
    }
  } else {
    // Fixed columns of compact_line without the throttle words: about 50.
    const std::size_t spark = std::min<std::size_t>(kMaxSpark, width > 90 ? (width - 80) / 2 : 5);
    std::size_t room = height > header + 1 ? height - header - 1 : 0;
    // More GPUs than lines: a line says which are shown, and PgUp/PgDn page by the same count.
    const bool paged = n > room && room > 1;
    if (paged) --room, gpus_per_page = room;
    const std::size_t first = paged ? std::min(ui.gpu_offset, n - 1) : 0;
    gpus_shown = std::min(n - first, room);
    if (paged && gpus_shown > 0) {
      out.emplace_back(
          fmt::format("GPUs {}-{} of {}: PgUp/PgDn, or enlarge the window", gpus[first]->info.index,
                      gpus[first + gpus_shown - 1]->info.index, n),
          Tone::kDim);
    }
    for (std::size_t i = first; i < first + gpus_shown; ++i) {
      out.push_back(compact_line(*gpus[i], history, spark, o));
    }
  }
  if (layout != nullptr) layout->gpus_shown = gpus_shown, layout->gpus_per_page = gpus_per_page;
  // The training ranks' table where it fits with room for the processes below it.
  if (std::vector<StyledLine> ranks = rank_table(snap);
      !ranks.empty() && out.size() + 1 + ranks.size() + kProcessMin <= height) {
    out.emplace_back();
    for (StyledLine& l : ranks) out.push_back(std::move(l));
  }
  if (out.size() + kProcessMin - 1 <= height) {
    std::vector<ProcessLine> arranged;
    if (lines == nullptr) arranged = arrange_processes(snap, ui.procs, {});
    const std::vector<ProcessLine>& listed = lines != nullptr ? *lines : arranged;
    out.emplace_back();
    const std::size_t rows = height - out.size() - 2;
    // Keep one line for "... N more" when the table does not fit.
    const std::size_t max_rows = listed.size() > rows ? std::max<std::size_t>(rows, 2) - 1 : rows;
    ProcessTableView view;
    view.lines = &listed;
    view.selected = ui.selected;
    view.util_columns = true;
    view.unicode = o.unicode;
    view.width = width;
    for (StyledLine& l : process_table(snap, max_rows, view)) out.push_back(std::move(l));
  }

  std::vector<std::string> frame;
  const std::size_t count = std::min(out.size(), height);
  frame.reserve(count + 1);
  for (std::size_t i = 0; i < count; ++i) frame.push_back(out[i].render(o.style, width));
  if (footer) {
    frame.resize(height);
    frame.push_back(footer_line(ui, o.unicode).render(o.style, width));
  }
  return frame;
}

}  // namespace gpumon::cli
