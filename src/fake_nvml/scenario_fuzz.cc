// SPDX-License-Identifier: MIT
// libFuzzer target for the scenario parser (GPUMON_BUILD_FUZZ=ON with clang):
//   build/scenario_fuzz testdata/fuzz/scenario -max_total_time=60
// A parse must end in a scenario or an error message, never a crash, leak or hang. Accepted
// scenarios are also evaluated a little, so the series code sees what the parser lets through.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fake_nvml/scenario_parser.h"
#include "fake_nvml/series.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const gpumon::fake::ParseResult result = gpumon::fake::parse_scenario(text, "fuzz");
  if (result.scenario.has_value() == !result.error.empty()) __builtin_trap();
  if (!result.scenario) return 0;
  for (const auto& device : result.scenario->devices) {
    for (const auto& series : device.series) {
      for (double t : {0.0, 0.5, 7.25, 1e6}) (void)gpumon::fake::evaluate(series, t);
    }
    gpumon::fake::RunningIntegral energy;
    (void)energy.at(device.at(gpumon::fake::Field::kPowerDrawMw), 3.7);
  }
  return 0;
}
