// SPDX-License-Identifier: MIT
// Small robust statistics for the rules. Inputs must be finite (callers drop NaN and missing
// values first); every function answers nullopt rather than a NaN when it has too little data.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <vector>

namespace gpumon::diagnose {

std::optional<double> mean_of(const std::vector<double>& v);
std::optional<double> median_of(std::vector<double> v);
/// Standard deviation / mean over >= 2 values with a positive mean.
std::optional<double> coefficient_of_variation(const std::vector<double>& v);
/// Theil-Sen slope of y over x: the median of the pairwise slopes, robust to outliers (up to
/// ~29% of them). Uses at most `max_points` evenly spaced points (the pairs grow as n^2).
std::optional<double> theil_sen_slope(const std::vector<double>& x, const std::vector<double>& y,
                                      std::size_t max_points = 400);
/// Clamps to [0, 1] and maps NaN to 0.
double unit_clamp(double v);

/// The confidence of a finding (0.5-1): 0.5 for meeting its threshold, up to +0.25 for the
/// amount of data (full at `n_full` samples or steps) and up to +0.25 for how far past the
/// threshold the value is (full at twice it). `higher_is_worse` false for "below" thresholds.
double confidence_of(double n, double n_full, double value, double threshold,
                     bool higher_is_worse = true);

}  // namespace gpumon::diagnose
