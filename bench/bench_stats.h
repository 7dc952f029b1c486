// SPDX-License-Identifier: MIT
// Statistics for interleaved benchmarks (../shared/MEASURING.md): medians and a percentile
// bootstrap interval of the median, with a fixed seed so reruns print the same interval.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace gpumon::bench {

inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/// 95 % percentile-bootstrap interval of the median of `v`.
inline std::pair<double, double> bootstrap_median_ci(const std::vector<double>& v,
                                                     int iterations = 2000) {
  if (v.empty()) return {0.0, 0.0};
  std::mt19937_64 rng(12345);
  std::uniform_int_distribution<std::size_t> pick(0, v.size() - 1);
  std::vector<double> medians;
  medians.reserve(static_cast<std::size_t>(iterations));
  std::vector<double> resample(v.size());
  for (int i = 0; i < iterations; ++i) {
    for (double& x : resample) x = v[pick(rng)];
    medians.push_back(median(resample));
  }
  std::sort(medians.begin(), medians.end());
  const auto at = [&](double q) {
    return medians[static_cast<std::size_t>(q * static_cast<double>(medians.size() - 1))];
  };
  return {at(0.025), at(0.975)};
}

}  // namespace gpumon::bench
