// SPDX-License-Identifier: MIT
// Values and failures of one fake device at a scenario time.
#include <algorithm>

#include "fake_nvml/runtime.h"

namespace gpumon::fake {

nvmlReturn_t DeviceState::rule_error(std::optional<Field> field, int symbol, double t) {
  const std::string_view name = kSymbolNames[symbol];
  for (std::size_t i = 0; i < spec->errors.size(); ++i) {
    const ErrorRule& r = spec->errors[i];
    const bool target = field ? r.field == field : (!r.field && call_matches(r.call, name));
    if (!target || t < r.from_s || t >= r.until_s) continue;
    const std::uint64_t hit = ++rule_hits[i];
    if (r.every_nth == 0 || hit % r.every_nth == 0) return static_cast<nvmlReturn_t>(r.code);
  }
  return NVML_SUCCESS;
}

nvmlReturn_t DeviceState::check(Field f, int symbol, double t) {
  if (spec->unsupported.test(static_cast<std::size_t>(f))) return NVML_ERROR_NOT_SUPPORTED;
  return rule_error(f, symbol, t);
}

double DeviceState::event_time_ns(std::size_t slot, std::uint64_t bit, double t) {
  const Series& reasons = spec->at(Field::kClockEventReasons);
  const auto set = [&](double at) {
    return (to_unsigned(evaluate(reasons, at), ~std::uint64_t{0}) & bit) != 0 ? 1.0 : 0.0;
  };
  return event_time.at(slot).at(set, t) * 1e9;
}

nvmlReturn_t DeviceState::read(Field f, double t, double* value) {
  if (spec->unsupported.test(static_cast<std::size_t>(f))) return NVML_ERROR_NOT_SUPPORTED;
  if (const nvmlReturn_t rc = rule_error(f, 0, t); rc != NVML_SUCCESS) return rc;
  switch (f) {
    case Field::kEnergyMj:
      *value = spec->energy_from_power
                   ? spec->energy_at_start_mj + energy.at(spec->at(Field::kPowerDrawMw), t)
                   : evaluate(spec->at(f), t);
      break;
    case Field::kMemoryUsedBytes: {
      // Used never exceeds what the reserve leaves, so free = total - reserved - used >= 0.
      const auto usable =
          static_cast<double>(spec->memory_total_bytes - spec->memory_reserved_bytes);
      *value = std::clamp(evaluate(spec->at(f), t), 0.0, usable);
      break;
    }
    case Field::kUtilizationGpuPct:
    case Field::kUtilizationMemoryPct:
    case Field::kFanSpeedPct: *value = std::clamp(evaluate(spec->at(f), t), 0.0, 100.0); break;
    default: *value = evaluate(spec->at(f), t);
  }
  return NVML_SUCCESS;
}

}  // namespace gpumon::fake
