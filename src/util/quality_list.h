// SPDX-License-Identifier: MIT
// HTTP header lists with quality values (RFC 9110 12.4.2), as Accept and Accept-Encoding carry
// them: "gzip;q=0.5, br", "application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1".
#pragma once

#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>

namespace gpumon::util {

/// `s` without leading and trailing spaces and tabs.
inline std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// Calls `fn(item, q)` for each comma-separated item of `header`: the item's value without its
/// parameters ("gzip", "text/plain") and its q parameter (1 when absent or unreadable).
template <typename Fn>
void for_each_quality_item(std::string_view header, Fn fn) {
  while (!header.empty()) {
    const std::size_t comma = std::min(header.find(','), header.size());
    const std::string_view item = header.substr(0, comma);
    header.remove_prefix(std::min(comma + 1, header.size()));
    const std::size_t semi = std::min(item.find(';'), item.size());
    std::string_view params = item.substr(std::min(semi + 1, item.size()));
    double q = 1;
    while (!params.empty()) {
      const std::size_t next = std::min(params.find(';'), params.size());
      const std::string_view p = trim_blanks(params.substr(0, next));
      params.remove_prefix(std::min(next + 1, params.size()));
      if (p.size() > 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
        const std::string value(p.substr(2));
        char* end = nullptr;
        const double v = std::strtod(value.c_str(), &end);
        if (end != value.c_str()) q = v;
      }
    }
    fn(trim_blanks(item.substr(0, semi)), q);
  }
}

}  // namespace gpumon::util
