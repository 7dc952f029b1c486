// SPDX-License-Identifier: MIT
#include "fake_nvml/series.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace gpumon::fake {
namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27U)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31U);
}

// Uniform in [-1, 1], one draw per millisecond of scenario time.
double noise_unit(std::uint64_t stream, double t_s) {
  const auto ms = static_cast<std::int64_t>(std::floor(t_s * 1000.0));
  const std::uint64_t bits = splitmix64(stream ^ splitmix64(static_cast<std::uint64_t>(ms)));
  return static_cast<double>(bits >> 11U) * 0x1.0p-53 * 2.0 - 1.0;
}

double periodic(const Series& s, double t_s) {
  double x = std::fmod((t_s + s.phase_s) / s.period_s, 1.0);
  if (x < 0) x += 1.0;
  const double span = s.max - s.min;
  switch (s.shape) {
    case Series::Shape::kSine:
      return s.min + span * 0.5 * (1.0 + std::sin(2.0 * std::numbers::pi * x));
    case Series::Shape::kSquare: return x < s.duty ? s.max : s.min;
    case Series::Shape::kSawtooth: return s.min + span * x;
    case Series::Shape::kTriangle:
      return x < 0.5 ? s.min + span * 2.0 * x : s.max - span * (2.0 * x - 1.0);
  }
  return s.min;
}

double points(const Series& s, double t_s) {
  const auto& p = s.points;
  if (p.empty()) return 0;
  double t = t_s;
  if (s.repeat_s > 0 && t >= 0) t = std::fmod(t, s.repeat_s);
  // The last point at or before t.
  auto it = std::upper_bound(p.begin(), p.end(), t,
                             [](double v, const Series::Point& q) { return v < q.t_s; });
  if (it == p.begin()) return p.front().value;
  const Series::Point& a = *(it - 1);
  if (!s.linear) return a.value;
  Series::Point b;
  if (it != p.end()) {
    b = *it;
  } else if (s.repeat_s > 0) {
    b = {s.repeat_s + p.front().t_s, p.front().value};  // wrap towards the first point
  } else {
    return a.value;
  }
  if (b.t_s <= a.t_s) return a.value;
  return a.value + (b.value - a.value) * (t - a.t_s) / (b.t_s - a.t_s);
}

}  // namespace

double evaluate_shape(const Series& s, double t_s) {
  switch (s.kind) {
    case Series::Kind::kConstant: return s.value;
    case Series::Kind::kRamp:
      if (t_s <= s.start_s) return s.from;
      if (t_s >= s.start_s + s.duration_s) return s.to;
      return s.from + (s.to - s.from) * (t_s - s.start_s) / s.duration_s;
    case Series::Kind::kPoints: return points(s, t_s);
    case Series::Kind::kPeriodic: return periodic(s, t_s);
  }
  return 0;
}

double evaluate(const Series& s, double t_s) {
  double v = evaluate_shape(s, t_s);
  if (s.noise > 0) v += s.noise * noise_unit(s.noise_stream, t_s);
  return std::clamp(v, s.clamp_min, s.clamp_max);
}

std::uint64_t to_unsigned(double value, std::uint64_t max) {
  if (!(value > 0)) return 0;  // also NaN
  const double rounded = std::nearbyint(value);
  if (rounded >= static_cast<double>(max)) return max;
  return static_cast<std::uint64_t>(rounded);
}

double RunningIntegral::at(const Series& s, double t_s) {
  return at([&s](double t) { return evaluate(s, t); }, t_s);
}

double RunningIntegral::at(const std::function<double(double)>& value_at, double t_s) {
  if (t_s <= 0) return 0;
  if (t_s < t_s_) {
    t_s_ = 0;
    sum_ = 0;
  }
  // Whole steps on a fixed grid (so the result does not depend on when it is read), then the
  // partial step up to t_s, which is not kept.
  const double grid_end = std::floor(t_s / kStepS) * kStepS;
  if (grid_end > t_s_) {
    const double steps = std::round((grid_end - t_s_) / kStepS);
    const double step = steps > kMaxSteps ? (grid_end - t_s_) / kMaxSteps : kStepS;
    const auto n = static_cast<std::int64_t>(std::min(steps, kMaxSteps));
    double t = t_s_;
    double prev = value_at(t);
    for (std::int64_t i = 1; i <= n; ++i) {
      const double next_t = i == n ? grid_end : t_s_ + static_cast<double>(i) * step;
      const double next = value_at(next_t);
      sum_ += area(prev, next, next_t - t);
      t = next_t;
      prev = next;
    }
    t_s_ = grid_end;
  }
  return sum_ + area(value_at(t_s_), value_at(t_s), t_s - t_s_);
}

}  // namespace gpumon::fake
