// SPDX-License-Identifier: MIT
// "1 tick", "2 ticks": counts in messages read as English.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpumon::util {

/// `n` and `noun`, with an "s" unless n is 1 (`plural` for irregular ones: "processes").
inline std::string count_of(std::uint64_t n, std::string_view noun, std::string_view plural = {}) {
  std::string out = std::to_string(n) + " ";
  if (n == 1) return out.append(noun);
  if (!plural.empty()) return out.append(plural);
  return out.append(noun).append("s");
}

}  // namespace gpumon::util
