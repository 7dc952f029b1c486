// SPDX-License-Identifier: MIT
// Short histories for the live view's sparklines: a fixed-size ring of the last N samples of
// one metric, gaps kept as gaps (a missing sample is not 0).
//
// Thread-safety: none; the live view's loop owns them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cli/snapshot.h"

namespace gpumon::cli {

class History {
 public:
  /// `capacity` > 0 samples are kept; older ones are overwritten.
  explicit History(std::size_t capacity = 60);

  void push(std::optional<double> value);
  std::size_t size() const { return count_; }
  std::size_t capacity() const { return ring_.size(); }
  /// Sample `i` counting from the oldest kept (0) to the newest (size() - 1).
  std::optional<double> at(std::size_t i) const;
  /// Every kept sample, oldest first.
  std::vector<std::optional<double>> values() const;

 private:
  std::vector<std::optional<double>> ring_;
  std::size_t next_ = 0;   ///< where the next push writes
  std::size_t count_ = 0;  ///< samples kept, <= capacity
};

/// The newest min(width, size) samples of `h` as a sparkline `width` columns wide, right
/// aligned (the newest sample is the last column). Each value is scaled against `max_value`
/// to one of 8 levels: "▁▂▃▄▅▆▇█" when `unicode`, else "_.:-=+*#". Gaps are spaces.
std::string sparkline(const History& h, std::size_t width, double max_value, bool unicode);

/// Utilization and memory-used histories (both in %) for every GPU of a snapshot.
class GpuHistories {
 public:
  explicit GpuHistories(std::size_t capacity = 60) : capacity_(capacity) {}

  /// Appends one sample per GPU from `snap` (GPUs it has not seen before start empty).
  void record(const Snapshot& snap);
  /// History of GPU `index`; an empty history for an index never recorded.
  const History& utilization(unsigned index) const;
  const History& memory(unsigned index) const;

 private:
  std::size_t capacity_;
  std::vector<History> utilization_;
  std::vector<History> memory_;
  History empty_{1};
};

}  // namespace gpumon::cli
