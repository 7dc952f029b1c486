// SPDX-License-Identifier: MIT
#include "cli/gpu_cells.h"

#include <fmt/format.h>

#include <cmath>

#include "cli/format_units.h"
#include "gpu/xid.h"

namespace gpumon::cli {
namespace {

Cell missing_cell(Missing why) {
  return {std::string(missing_token(why)), Tone::kDim};
}

template <typename T>
Cell counter_cell(const Reading<T>& r, Tone when_nonzero) {
  if (!r) return missing_cell(r.why());
  return {fmt::format("{}", r.value()), r.value() > 0 ? when_nonzero : Tone::kPlain};
}

}  // namespace

Cell percent_cell(const Reading<unsigned>& pct) {
  if (!pct) return missing_cell(pct.why());
  return {fmt::format("{} %", pct.value()), Tone::kPlain};
}

Cell ratio_percent_cell(const Reading<double>& ratio) {
  if (!ratio) return missing_cell(ratio.why());
  return {fmt::format("{:.0f} %", ratio.value() * 100.0), Tone::kPlain};
}

Cell temperature_cell(const Reading<unsigned>& c, unsigned warn, unsigned bad) {
  if (!c) return missing_cell(c.why());
  const Tone tone = c.value() >= bad ? Tone::kBad : c.value() >= warn ? Tone::kWarn : Tone::kPlain;
  return {fmt::format("{}°C", c.value()), tone};
}

Cell power_cell(const DeviceSample& s) {
  const std::string draw =
      reading_text(s.power_draw_w, [](double w) { return fmt::format("{:.0f}", w); });
  const std::string limit =
      reading_text(s.power_limit_w, [](double w) { return fmt::format("{:.0f}", w); });
  if (!s.power_draw_w && !s.power_limit_w) return missing_cell(s.power_draw_w.why());
  return {fmt::format("{} / {} W", draw, limit), Tone::kPlain};
}

Cell clock_cell(const Reading<unsigned>& mhz, const Reading<unsigned>& max_mhz) {
  if (!mhz) return missing_cell(mhz.why());
  const std::string max = reading_text(max_mhz, [](unsigned v) { return fmt::format("{}", v); });
  return {fmt::format("{}/{} MHz", mhz.value(), max), Tone::kPlain};
}

Cell pstate_cell(const Reading<unsigned>& pstate) {
  if (!pstate) return missing_cell(pstate.why());
  return {fmt::format("P{}", pstate.value()), Tone::kPlain};
}

Reading<std::uint64_t> memory_total(const DeviceSample& s, const DeviceStatic& d) {
  if (s.memory_total_bytes || s.lost) return s.memory_total_bytes;
  return d.memory_total_bytes ? d.memory_total_bytes : s.memory_total_bytes;
}

std::optional<double> memory_fraction(const DeviceSample& s, const DeviceStatic& d) {
  const Reading<std::uint64_t> total = memory_total(s, d);
  if (!s.memory_used_bytes || !total || total.value() == 0) return std::nullopt;
  return static_cast<double>(s.memory_used_bytes.value()) / static_cast<double>(total.value());
}

Cell memory_cell(const DeviceSample& s, const DeviceStatic& d) {
  const Reading<std::uint64_t> total = memory_total(s, d);
  if (!s.memory_used_bytes && !total) return missing_cell(s.memory_used_bytes.why());
  return {
      fmt::format("{} / {} GiB", reading_text(s.memory_used_bytes, gib), reading_text(total, gib)),
      Tone::kPlain};
}

Cell memory_percent_cell(const DeviceSample& s, const DeviceStatic& d, const Thresholds& t) {
  const std::optional<double> f = memory_fraction(s, d);
  if (!f)
    return missing_cell(s.memory_used_bytes ? Missing::kNotAvailable : s.memory_used_bytes.why());
  const Tone tone = *f >= t.memory_bad    ? Tone::kBad
                    : *f >= t.memory_warn ? Tone::kWarn
                                          : Tone::kPlain;
  return {fmt::format("{:.0f} %", std::floor(*f * 100.0)), tone};
}

StyledLine ecc_cells(const DeviceSample& s) {
  StyledLine line("ECC ");
  if (!s.ecc_corrected_volatile && !s.ecc_uncorrected_volatile &&
      s.ecc_corrected_volatile.why() == s.ecc_uncorrected_volatile.why()) {
    const Cell c = missing_cell(s.ecc_corrected_volatile.why());
    return line.add(c.text, c.tone);
  }
  const Cell corrected = counter_cell(s.ecc_corrected_volatile, Tone::kWarn);
  const Cell uncorrected = counter_cell(s.ecc_uncorrected_volatile, Tone::kBad);
  line.add("corr ").add(corrected.text, corrected.tone);
  line.add(" uncorr ").add(uncorrected.text, uncorrected.tone);
  return line;
}

StyledLine throttle_cells(const DeviceSample& s) {
  StyledLine line("throttle: ");
  if (!s.clock_event_reasons) {
    const Cell c = missing_cell(s.clock_event_reasons.why());
    return line.add(c.text, c.tone);
  }
  const auto words = clock_event_words(s.clock_event_reasons.value());
  if (words.empty()) return line.add("none");
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) line.add(", ");
    line.add(words[i].text, words[i].problem ? Tone::kBad : Tone::kPlain);
  }
  return line;
}

StyledLine lost_gpu_cells(const GpuSnapshot& g) {
  StyledLine line("GPU LOST", Tone::kBad);
  if (g.info.pci_bus_id) line.add("  " + g.info.pci_bus_id.value());
  if (g.last_xid) {
    line.add("  " + describe_xid(*g.last_xid), Tone::kBad);
  }
  return line.add("  (see `dmesg | grep -i xid`)", Tone::kDim);
}

StyledLine stale_gpu_cells(const DeviceSample& s) {
  StyledLine line("NOT RESPONDING", Tone::kBad);
  if (!s.stale) return line;
  const double for_s =
      std::max(0.0, std::chrono::duration<double>(s.mono_time - s.stale->since).count());
  const std::string call = s.stale->call.empty() ? "an NVML call" : s.stale->call;
  line.add(fmt::format("  {} has not returned for {:.0f} s", call, for_s));
  return line.add("  (the driver may be hung: try `nvidia-smi`)", Tone::kDim);
}

std::string gpu_name(const DeviceStatic& d) {
  if (!d.name && (d.name.why() == Missing::kGpuLost || d.open_error)) return "";
  return reading_text(d.name, [](const std::string& n) { return n; });
}

}  // namespace gpumon::cli
