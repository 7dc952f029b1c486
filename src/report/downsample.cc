// SPDX-License-Identifier: MIT
#include "report/downsample.h"

#include <algorithm>
#include <cmath>

namespace gpumon::report {

std::size_t TimeGrid::bucket(std::int64_t t_ms) const {
  if (count == 0 || t_ms <= start_ms) return 0;
  const auto i = static_cast<std::size_t>((t_ms - start_ms) / width_ms);
  return std::min(i, count - 1);
}

TimeGrid make_grid(std::int64_t first_ms, std::int64_t last_ms, std::int64_t typical_interval_ms,
                   std::size_t max_buckets) {
  TimeGrid g;
  g.start_ms = first_ms;
  if (first_ms > last_ms || max_buckets == 0) return g;
  const std::int64_t span = last_ms - first_ms + 1;  // the last sample gets a bucket too
  const auto n = static_cast<std::int64_t>(max_buckets);
  g.width_ms = std::max<std::int64_t>({(span + n - 1) / n, 2 * typical_interval_ms, 1});
  g.count = static_cast<std::size_t>((span + g.width_ms - 1) / g.width_ms);
  return g;
}

void BucketSeries::add(std::size_t i, double value) {
  if (!std::isfinite(value) || i >= buckets_.size()) return;
  auto& b = buckets_[i];
  b.min = std::min(b.min, value);
  b.max = std::max(b.max, value);
  b.sum += value;
  ++b.count;
  any_ = true;
}

}  // namespace gpumon::report
