// SPDX-License-Identifier: MIT
// Lower case for protocol text (HTTP header names, locale names) and the live view's filter:
// ASCII letters only, whatever the process locale, every other byte as it is.
#pragma once

#include <string>
#include <string_view>

namespace gpumon::util {

inline std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace gpumon::util
