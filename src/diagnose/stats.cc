// SPDX-License-Identifier: MIT
#include "diagnose/stats.h"

#include <algorithm>
#include <cmath>

namespace gpumon::diagnose {

std::optional<double> mean_of(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

std::optional<double> median_of(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2) return *mid;
  const double hi = *mid;
  const double lo = *std::max_element(v.begin(), mid);
  return (lo + hi) / 2;
}

std::optional<double> coefficient_of_variation(const std::vector<double>& v) {
  const auto m = mean_of(v);
  if (v.size() < 2 || !m || *m <= 0) return std::nullopt;
  double ss = 0;
  for (double x : v) ss += (x - *m) * (x - *m);
  return std::sqrt(ss / static_cast<double>(v.size())) / *m;
}

std::optional<double> theil_sen_slope(const std::vector<double>& x, const std::vector<double>& y,
                                      std::size_t max_points) {
  const std::size_t n = std::min(x.size(), y.size());
  if (n < 2) return std::nullopt;
  std::vector<std::size_t> idx;
  const std::size_t m = std::min(n, std::max<std::size_t>(max_points, 2));
  for (std::size_t k = 0; k < m; ++k) idx.push_back(k * (n - 1) / (m - 1));
  std::vector<double> slopes;
  slopes.reserve(m * (m - 1) / 2);
  for (std::size_t a = 0; a < idx.size(); ++a)
    for (std::size_t b = a + 1; b < idx.size(); ++b) {
      const double dx = x[idx[b]] - x[idx[a]];
      if (dx > 0) slopes.push_back((y[idx[b]] - y[idx[a]]) / dx);
    }
  return median_of(std::move(slopes));
}

double unit_clamp(double v) {
  if (!(v > 0)) return 0;
  return v > 1 ? 1 : v;
}

double confidence_of(double n, double n_full, double value, double threshold,
                     bool higher_is_worse) {
  const double amount = n_full > 0 ? unit_clamp(n / n_full) : 1;
  double past = 0;
  if (threshold > 0 && value > 0)
    past = higher_is_worse ? value / threshold - 1 : threshold / value - 1;
  return 0.5 + 0.25 * amount + 0.25 * unit_clamp(past);
}

}  // namespace gpumon::diagnose
