// SPDX-License-Identifier: MIT
// Evaluation of scenario series: the value of a Series at a scenario time, and the running
// integrals that make energy consistent with power and clock-event time with the reasons. Pure
// functions, thread-compatible.
#pragma once

#include <cstdint>
#include <functional>

#include "fake_nvml/scenario.h"

namespace gpumon::fake {

/// The value of `s` at scenario time `t_s`: the kind's shape, plus noise, then clamped.
/// Deterministic: the same series and time always give the same value.
double evaluate(const Series& s, double t_s);

/// The shape alone (no noise, no clamp), for tests and for integrating.
double evaluate_shape(const Series& s, double t_s);

/// Rounds to the nearest integer and clamps into [0, max]: how a value reaches an NVML integer.
std::uint64_t to_unsigned(double value, std::uint64_t max);

/// Integrates a series over scenario time (trapezoid or step rule), incrementally: each call
/// advances from the last time it reached. Integrating mW over seconds gives mJ.
class RunningIntegral {
 public:
  /// kTrapezoid for smooth series (power); kStep for step functions such as a bit of a code
  /// field, held from one change to the next: exact when the changes fall on the grid.
  enum class Rule : std::uint8_t { kTrapezoid, kStep };
  explicit RunningIntegral(Rule rule = Rule::kTrapezoid) : rule_(rule) {}

  /// Grid step of the integration, in scenario seconds (the driver's power sample period).
  static constexpr double kStepS = 0.02;
  /// At most this many steps per call when catching up a long way (the step grows instead).
  static constexpr double kMaxSteps = 100000;

  /// The integral of `s` from 0 to `t_s` (0 for t_s <= 0). Calls with decreasing times restart
  /// from 0, so any order is correct; increasing times are cheap.
  double at(const Series& s, double t_s);
  /// The same for any function of scenario time (the time a clock-event bit was set).
  double at(const std::function<double(double)>& value_at, double t_s);

 private:
  double area(double from_value, double to_value, double dt) const {
    return (rule_ == Rule::kStep ? from_value : 0.5 * (from_value + to_value)) * dt;
  }
  Rule rule_;
  double t_s_ = 0;
  double sum_ = 0;
};

}  // namespace gpumon::fake
