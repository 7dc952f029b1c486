// SPDX-License-Identifier: MIT
#include "query/monitor_table.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

namespace gpumon::query {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
using Cell = std::optional<long long>;

// `text` right-aligned in `width` (never cut).
std::string right(std::string_view text, std::size_t width) {
  std::string out;
  if (text.size() < width) out.assign(width - text.size(), ' ');
  out += text;
  return out;
}

std::string cell_text(const Cell& c) {
  return c ? std::to_string(*c) : std::string("-");
}

template <typename T>
Cell whole(const Reading<T>& r) {
  if (!r) return std::nullopt;
  return static_cast<long long>(std::floor(static_cast<double>(r.value())));
}

Cell mib(const Reading<std::uint64_t>& r) {
  if (!r) return std::nullopt;
  return static_cast<long long>(std::floor(static_cast<double>(r.value()) / kMiB));
}

// fb rounds up, as nvidia-smi's memory.used does (on the H200: 4046.8 MiB used is 4047);
// bar1 is cut down (1.3 MiB is 1).
Cell mib_up(const Reading<std::uint64_t>& r) {
  if (!r) return std::nullopt;
  return static_cast<long long>(std::ceil(static_cast<double>(r.value()) / kMiB));
}

Cell mib_per_s(const Reading<double>& r) {
  if (!r) return std::nullopt;
  return static_cast<long long>(std::floor(r.value() / kMiB));
}

// pviol: the share of the interval the power cap held the clocks down, whole percent: the
// growth of the driver's power-cap time over the time between the two samples. At the H200's
// cap the first rate line read 90 (95 at -d 2) where nvidia-smi's reads 100, the later ones
// 100 as nvidia-smi's: the first interval is ~100 ms of counter short, also when spanned by
// NVML's own field timestamps; the cause is not known (docs/results/h200-2026-12-03-counters/).
Cell power_violation_pct(const DmonInput& in) {
  const Reading<std::uint64_t>& held = in.sample.clock_event_sw_power_cap_ns;
  if (!held) return std::nullopt;
  const DeviceSample* prev = in.previous;
  if (prev == nullptr || !prev->clock_event_sw_power_cap_ns) return 0;
  const double span_ns =
      std::chrono::duration<double, std::nano>(in.sample.mono_time - prev->mono_time).count();
  const std::uint64_t before = prev->clock_event_sw_power_cap_ns.value();
  if (span_ns <= 0 || held.value() < before) return 0;  // a driver reload restarts the counter
  const double pct = 100.0 * static_cast<double>(held.value() - before) / span_ns;
  return std::llround(std::clamp(pct, 0.0, 100.0));
}

// tviol: 1 when SW or HW thermal slowdown held the clocks at any time in the interval.
Cell thermal_violation(const DmonInput& in) {
  const DeviceSample& s = in.sample;
  if (!s.clock_event_sw_thermal_ns && !s.clock_event_hw_thermal_ns) return std::nullopt;
  if (in.previous == nullptr) return 0;
  const auto grew = [](const Reading<std::uint64_t>& now, const Reading<std::uint64_t>& before) {
    return now && before && now.value() > before.value();
  };
  return grew(s.clock_event_sw_thermal_ns, in.previous->clock_event_sw_thermal_ns) ||
                 grew(s.clock_event_hw_thermal_ns, in.previous->clock_event_hw_thermal_ns)
             ? 1
             : 0;
}

struct DmonColumn {
  char letter;  ///< the -s letter that shows it
  std::string_view name, unit;
  std::function<Cell(const DmonInput&)> value;  ///< nullptr: gpumon does not read it ("-")
};

const std::vector<DmonColumn>& dmon_columns() {
  static const std::vector<DmonColumn> columns = {
      {'p', "pwr", "W", [](const DmonInput& i) { return whole(i.sample.power_draw_w); }},
      {'p', "gtemp", "C", [](const DmonInput& i) { return whole(i.sample.temperature_gpu_c); }},
      {'p', "mtemp", "C", [](const DmonInput& i) { return whole(i.sample.temperature_memory_c); }},
      {'u', "sm", "%", [](const DmonInput& i) { return whole(i.sample.utilization_gpu_pct); }},
      {'u', "mem", "%", [](const DmonInput& i) { return whole(i.sample.utilization_memory_pct); }},
      {'u', "enc", "%", [](const DmonInput& i) { return whole(i.sample.utilization_encoder_pct); }},
      {'u', "dec", "%", [](const DmonInput& i) { return whole(i.sample.utilization_decoder_pct); }},
      {'u', "jpg", "%", [](const DmonInput& i) { return whole(i.sample.utilization_jpeg_pct); }},
      {'u', "ofa", "%", [](const DmonInput& i) { return whole(i.sample.utilization_ofa_pct); }},
      {'c', "mclk", "MHz", [](const DmonInput& i) { return whole(i.sample.mem_clock_mhz); }},
      {'c', "pclk", "MHz", [](const DmonInput& i) { return whole(i.sample.graphics_clock_mhz); }},
      {'v', "pviol", "%", power_violation_pct},
      {'v', "tviol", "bool", thermal_violation},
      {'m', "fb", "MB", [](const DmonInput& i) { return mib_up(i.sample.memory_used_bytes); }},
      {'m', "bar1", "MB", [](const DmonInput& i) { return mib(i.sample.bar1_used_bytes); }},
      {'m', "ccpm", "MB", nullptr},
      {'e', "sbecc", "errs",
       [](const DmonInput& i) { return whole(i.sample.ecc_corrected_volatile); }},
      {'e', "dbecc", "errs",
       [](const DmonInput& i) { return whole(i.sample.ecc_uncorrected_volatile); }},
      {'e', "pci", "errs", [](const DmonInput& i) { return whole(i.sample.pcie_replay_count); }},
      {'t', "rxpci", "MB/s", [](const DmonInput& i) { return mib_per_s(i.pcie.rx_bytes_per_s); }},
      {'t', "txpci", "MB/s", [](const DmonInput& i) { return mib_per_s(i.pcie.tx_bytes_per_s); }},
  };
  return columns;
}

bool shows(std::string_view select, char letter) {
  return select.find(letter) != std::string_view::npos;
}

Expected<std::string> parse_select(std::string_view letters, std::string_view allowed,
                                   std::string_view command) {
  if (letters.empty()) return usage_error(std::string(command) + ": -s needs metric letters.");
  for (char c : letters) {
    if (allowed.find(c) == std::string_view::npos) {
      return usage_error(std::string(command) + ": -s takes letters of '" + std::string(allowed) +
                         "', not '" + std::string(1, c) + "'.");
    }
  }
  return std::string(letters);
}

// The date and time columns of -o: headers padded to 13 characters, then the GPU's (`gpu`,
// `Idx`), whose data ends where its header does, as nvidia-smi lays out `-o DT`; without them
// the header starts with "# " and the GPU's data is 5 wide.
struct Stamp {
  std::string head1 = "# ", head2 = "# ", data;
  std::size_t gpu_width = 5;
};

Stamp stamp_of(StampColumns s, const std::tm& t) {
  Stamp out;
  if (!s.date && !s.time) return out;
  auto pad = [](std::string text) {
    text.resize(std::max<std::size_t>(text.size(), 13), ' ');
    return text;
  };
  out.head1 = out.head2 = "";
  char buf[32];
  if (s.date) {
    out.head1 = pad("#Date");
    out.head2 = pad("#YYYYMMDD");
    std::snprintf(buf, sizeof buf, " %04d%02d%02d    ", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday);
    out.data = buf;
  }
  if (s.time) {
    out.head1 += pad(s.date ? "Time" : "#Time");
    out.head2 += pad(s.date ? "HH:MM:SS" : "#HH:MM:SS");
    std::snprintf(buf, sizeof buf, "%02d:%02d:%02d", t.tm_hour, t.tm_min, t.tm_sec);
    out.data += buf;
  }
  out.gpu_width = out.head1.size() + 3 - out.data.size();
  return out;
}

}  // namespace

Expected<std::string> parse_dmon_select(std::string_view letters) {
  return parse_select(letters, "pucvmet", "dmon");
}

MetricSet dmon_metrics(std::string_view select) {
  MetricSet m;
  if (shows(select, 'p'))
    m |= MetricSet(MetricGroup::kPower) | MetricGroup::kTemperature |
         MetricGroup::kMemoryTemperature;
  if (shows(select, 'u'))
    m |= MetricSet(MetricGroup::kUtilization) | MetricGroup::kEncoderUtil |
         MetricGroup::kDecoderUtil | MetricGroup::kJpegUtil | MetricGroup::kOfaUtil;
  if (shows(select, 'c')) m |= MetricSet(MetricGroup::kMemClock) | MetricGroup::kGraphicsClock;
  if (shows(select, 'v')) m |= MetricSet(MetricGroup::kPerfPolicyTime) | MetricGroup::kSlowdownTime;
  if (shows(select, 'm')) m |= MetricSet(MetricGroup::kMemory) | MetricGroup::kBar1Memory;
  if (shows(select, 'e')) m |= MetricSet(MetricGroup::kEcc) | MetricGroup::kPcieReplay;
  return m;
}

bool dmon_needs_pcie(std::string_view select) {
  return shows(select, 't');
}

std::string dmon_header(std::string_view select, StampColumns stamp) {
  const Stamp s = stamp_of(stamp, std::tm{});
  std::string names = s.head1 + "gpu";
  std::string units = s.head2 + "Idx";
  for (const DmonColumn& c : dmon_columns()) {
    if (!shows(select, c.letter)) continue;
    names += right(c.name, 7);
    units += right(c.unit, 7);
  }
  return names + " \n" + units + " \n";
}

std::string dmon_line(std::string_view select, StampColumns stamp, const DmonInput& in,
                      const std::tm& local) {
  const Stamp s = stamp_of(stamp, local);
  std::string line = s.data + right(std::to_string(in.gpu), s.gpu_width);
  for (const DmonColumn& c : dmon_columns()) {
    if (!shows(select, c.letter)) continue;
    line += right(c.value ? cell_text(c.value(in)) : "-", 7);
  }
  return line + " \n";
}

Expected<std::string> parse_pmon_select(std::string_view letters) {
  return parse_select(letters, "um", "pmon");
}

std::string pmon_header(std::string_view select, StampColumns stamp) {
  const Stamp s = stamp_of(stamp, std::tm{});
  std::string names = s.head1 + "gpu" + right("pid", 12) + right("type", 7);
  std::string units = s.head2 + "Idx" + right("#", 12) + right("C/G", 7);
  if (shows(select, 'u')) {
    for (const char* n : {"sm", "mem", "enc", "dec", "jpg", "ofa"}) {
      names += right(n, 7);
      units += right("%", 7);
    }
  }
  if (shows(select, 'm')) {
    names += right("fb", 7) + right("ccpm", 7);
    units += right("MB", 7) + right("MB", 7);
  }
  return names + "    command \n" + units + "    name \n";
}

std::string pmon_line(std::string_view select, StampColumns stamp, unsigned gpu,
                      const std::optional<PmonProcess>& p, const std::tm& local) {
  const Stamp s = stamp_of(stamp, local);
  auto opt = [](const auto& v) { return v ? std::to_string(*v) : std::string("-"); };
  std::string line = s.data + right(std::to_string(gpu), s.gpu_width);
  line += right(p ? std::to_string(p->pid) : "-", 11);
  line += right(p ? std::string(1, p->type) : "-", 6);
  if (shows(select, 'u')) {
    line += right(p ? opt(p->sm_pct) : "-", 7) + right(p ? opt(p->mem_pct) : "-", 7);
    for (int i = 0; i < 4; ++i) line += right("-", 7);  // enc dec jpg ofa: not read per process
  }
  if (shows(select, 'm')) {
    std::optional<long long> fb;
    if (p && p->fb_bytes) fb = static_cast<long long>(static_cast<double>(*p->fb_bytes) / kMiB);
    line += right(p ? opt(fb) : "-", 7) + right("-", 7);
  }
  std::string name = p ? p->name.substr(0, 15) : "-";
  name.resize(15, ' ');
  return line + "    " + name + "\n";
}

std::vector<PmonProcess> pmon_processes(const std::vector<GpuProcess>& processes,
                                        const std::vector<ProcessUtilization>& utilization) {
  std::map<unsigned, const ProcessUtilization*> newest;
  for (const ProcessUtilization& u : utilization) {
    auto& slot = newest[u.pid];
    if (slot == nullptr || u.timestamp_us > slot->timestamp_us) slot = &u;
  }
  std::vector<PmonProcess> out;
  for (const GpuProcess& g : processes) {
    PmonProcess p;
    p.pid = g.pid;
    if (const auto it = newest.find(g.pid); it != newest.end()) {
      p.sm_pct = it->second->sm_util_pct;
      p.mem_pct = it->second->mem_util_pct;
    }
    if (g.used_memory_bytes) p.fb_bytes = g.used_memory_bytes.value();
    const std::string full = g.name ? g.name.value() : std::string("-");
    const auto slash = full.rfind('/');
    p.name = slash == std::string::npos ? full : full.substr(slash + 1);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace gpumon::query
