// SPDX-License-Identifier: MIT
// Min/max/mean downsampling onto a fixed time grid shared by every GPU of a run: each bucket
// keeps the lowest, highest and mean value of the samples that fall into it, so a spike as
// short as one sample stays visible however long the run. A bucket without a value is a gap
// (null in the page), never 0.
//
// Thread-safety: plain values; one thread at a time per object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace gpumon::report {

/// `count` buckets of `width_ms` from `start_ms`: bucket i covers
/// [start_ms + i * width_ms, start_ms + (i + 1) * width_ms); the last also takes anything later.
struct TimeGrid {
  std::int64_t start_ms = 0;
  std::int64_t width_ms = 1;
  std::size_t count = 0;

  /// The bucket of time `t_ms` (clamped to the first and last).
  std::size_t bucket(std::int64_t t_ms) const;
  /// The middle of bucket `i`, in ms since the epoch (where its points are drawn).
  std::int64_t center_ms(std::size_t i) const {
    return start_ms + std::int64_t(i) * width_ms + width_ms / 2;
  }
};

/// A grid of at most `max_buckets` over [first_ms, last_ms]; buckets are at least
/// 2 * `typical_interval_ms` wide so that sampling jitter never leaves a false gap. No buckets
/// when there is no time (first_ms > last_ms).
TimeGrid make_grid(std::int64_t first_ms, std::int64_t last_ms, std::int64_t typical_interval_ms,
                   std::size_t max_buckets);

struct BucketStats {
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  double sum = 0;
  std::uint32_t count = 0;

  std::optional<double> mean() const {
    return count ? std::optional<double>(sum / count) : std::nullopt;
  }
};

/// One metric of one GPU on a grid.
class BucketSeries {
 public:
  explicit BucketSeries(std::size_t buckets = 0) : buckets_(buckets) {}
  /// Adds `value` to bucket `i`; NaN and infinities are ignored (they are missing values).
  void add(std::size_t i, double value);
  const BucketStats& at(std::size_t i) const { return buckets_[i]; }
  std::size_t size() const { return buckets_.size(); }
  /// True when at least one bucket holds a value.
  bool any() const { return any_; }

 private:
  std::vector<BucketStats> buckets_;
  bool any_ = false;
};

}  // namespace gpumon::report
