// SPDX-License-Identifier: MIT
#include "host/host_memory_parse.h"

#include <charconv>

namespace gpumon::host {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

std::optional<std::int64_t> to_int(std::string_view s) {
  std::int64_t v = 0;
  const auto* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc() || ptr != end || v < 0) return std::nullopt;
  return v;
}

}  // namespace

std::optional<std::int64_t> parse_kb_field(std::string_view text, std::string_view key) {
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ':')
      continue;
    line = trim(line.substr(key.size() + 1));
    if (line.size() < 3 || line.substr(line.size() - 3) != " kB") return std::nullopt;
    const auto kb = to_int(trim(line.substr(0, line.size() - 3)));
    if (!kb || *kb > (std::int64_t{1} << 52)) return std::nullopt;
    return *kb * 1024;
  }
  return std::nullopt;
}

std::optional<std::int64_t> parse_statm_resident_pages(std::string_view text) {
  text = trim(text);
  const std::size_t a = text.find(' ');
  if (a == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(a + 1);
  return to_int(rest.substr(0, rest.find(' ')));
}

std::vector<std::int64_t> parse_children(std::string_view text) {
  std::vector<std::int64_t> out;
  while (!text.empty()) {
    const std::size_t sp = text.find_first_of(" \n");
    if (const auto pid = to_int(text.substr(0, sp)); pid && *pid > 0) out.push_back(*pid);
    if (sp == std::string_view::npos) break;
    text.remove_prefix(sp + 1);
  }
  return out;
}

std::optional<std::int64_t> parse_cgroup_limit(std::string_view text) {
  text = trim(text);
  if (text == "max") return std::nullopt;
  const auto v = to_int(text);
  if (!v || *v >= (std::int64_t{1} << 62)) return std::nullopt;
  return v;
}

std::optional<std::int64_t> parse_cgroup_usage(std::string_view text) {
  return to_int(trim(text));
}

}  // namespace gpumon::host
