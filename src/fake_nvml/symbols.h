// SPDX-License-Identifier: MIT
// Every NVML symbol name the fake library exports: the names of nvml/nvml_entry_points.inc,
// fallbacks included, so the list cannot drift from the loader's; plus the few that other NVML
// clients call first (pynvml's nvmlInit is nvmlInitWithFlags), so they can run on the fake too.
#pragma once

#include <cstddef>
#include <iterator>
#include <string_view>

namespace gpumon::fake {

// clang-format off
inline constexpr const char* kSymbolNames[] = {
#define GPUMON_NVML_REQUIRED(member, ret, params, ...) __VA_ARGS__,
#define GPUMON_NVML_OPTIONAL(member, ret, params, ...) __VA_ARGS__,
#include "nvml/nvml_entry_points.inc"
#undef GPUMON_NVML_REQUIRED
#undef GPUMON_NVML_OPTIONAL
    "nvmlInitWithFlags",
};
// clang-format on
inline constexpr std::size_t kSymbolCount = std::size(kSymbolNames);

/// Index of `name` in kSymbolNames, or -1. Usable at compile time.
constexpr int symbol_index(std::string_view name) {
  for (std::size_t i = 0; i < kSymbolCount; ++i) {
    if (name == kSymbolNames[i]) return static_cast<int>(i);
  }
  return -1;
}

/// True when a scenario's `call` names `symbol`: the same name, or its unversioned base
/// ("nvmlDeviceGetComputeRunningProcesses" matches "..._v3").
constexpr bool call_matches(std::string_view call, std::string_view symbol) {
  if (call == symbol) return true;
  if (symbol.size() <= call.size() + 2 || symbol.substr(0, call.size()) != call) return false;
  std::string_view rest = symbol.substr(call.size());
  if (rest.substr(0, 2) != "_v") return false;
  for (char c : rest.substr(2)) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

/// True when `call` matches at least one exported symbol.
constexpr bool is_known_call(std::string_view call) {
  for (const char* s : kSymbolNames) {
    if (call_matches(call, s)) return true;
  }
  return false;
}

}  // namespace gpumon::fake
