// SPDX-License-Identifier: MIT
#include "cli/history.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "cli/gpu_cells.h"

namespace gpumon::cli {

History::History(std::size_t capacity) : ring_(std::max<std::size_t>(capacity, 1)) {}

void History::push(std::optional<double> value) {
  ring_[next_] = value;
  next_ = (next_ + 1) % ring_.size();
  count_ = std::min(count_ + 1, ring_.size());
}

std::optional<double> History::at(std::size_t i) const {
  if (i >= count_) return std::nullopt;
  // The oldest kept sample sits `count_` slots behind `next_`; adding capacity first keeps the
  // index unsigned-safe.
  const std::size_t n = ring_.size();
  return ring_[(next_ + n - count_ + i) % n];
}

std::vector<std::optional<double>> History::values() const {
  std::vector<std::optional<double>> out;
  out.reserve(count_);
  for (std::size_t i = 0; i < count_; ++i) out.push_back(at(i));
  return out;
}

std::string sparkline(const History& h, std::size_t width, double max_value, bool unicode) {
  static constexpr std::array<std::string_view, 8> kBlocks{
      "\xE2\x96\x81", "\xE2\x96\x82", "\xE2\x96\x83", "\xE2\x96\x84",
      "\xE2\x96\x85", "\xE2\x96\x86", "\xE2\x96\x87", "\xE2\x96\x88"};
  static constexpr std::string_view kAscii = "_.:-=+*#";
  const std::size_t shown = std::min(width, h.size());
  std::string out(width - shown, ' ');
  for (std::size_t i = h.size() - shown; i < h.size(); ++i) {
    const std::optional<double> v = h.at(i);
    if (!v || !std::isfinite(*v)) {
      out += ' ';
      continue;
    }
    const double f = max_value > 0 ? std::clamp(*v / max_value, 0.0, 1.0) : 0.0;
    const auto level = static_cast<std::size_t>(std::lround(f * 7.0));
    if (unicode) {
      out += kBlocks[level];
    } else {
      out += kAscii[level];
    }
  }
  return out;
}

void GpuHistories::record(const Snapshot& snap) {
  for (const GpuSnapshot& g : snap.gpus) {
    const unsigned i = g.info.index;
    if (i >= utilization_.size()) {
      utilization_.resize(i + 1, History(capacity_));
      memory_.resize(i + 1, History(capacity_));
    }
    const auto& util = g.sample.utilization_gpu_pct;
    utilization_[i].push(util ? std::optional<double>(util.value()) : std::nullopt);
    const std::optional<double> f = memory_fraction(g.sample, g.info);
    memory_[i].push(f ? std::optional<double>(*f * 100.0) : std::nullopt);
  }
}

const History& GpuHistories::utilization(unsigned index) const {
  return index < utilization_.size() ? utilization_[index] : empty_;
}

const History& GpuHistories::memory(unsigned index) const {
  return index < memory_.size() ? memory_[index] : empty_;
}

}  // namespace gpumon::cli
