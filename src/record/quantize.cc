// SPDX-License-Identifier: MIT
#include "record/quantize.h"

#include <cmath>

namespace gpumon::record {
namespace {

// 2^63 is exactly representable; stay a little inside it so llround cannot overflow.
constexpr double kLimit = 9.0e18;

}  // namespace

std::optional<std::int64_t> quantize(double value, double quantum) {
  if (!std::isfinite(value) || !(quantum > 0)) return std::nullopt;
  const double scaled = quantum < 1 ? value * std::round(1 / quantum) : value / quantum;
  if (!(std::fabs(scaled) < kLimit)) return std::nullopt;
  return std::llround(scaled);
}

double dequantize(std::int64_t q, double quantum) {
  if (quantum < 1) return static_cast<double>(q) / std::round(1 / quantum);
  return static_cast<double>(q) * quantum;
}

}  // namespace gpumon::record
