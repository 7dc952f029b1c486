// SPDX-License-Identifier: MIT
#include "host/cgroup_oom.h"

#include <charconv>
#include <fstream>
#include <sstream>

namespace gpumon::host {
namespace {

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::optional<std::uint64_t> parse_oom_kill(const std::string& text) {
  std::istringstream lines(text);
  std::string key, value;
  while (lines >> key >> value) {
    if (key != "oom_kill") continue;
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec == std::errc() && end == value.data() + value.size()) return n;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> cgroup_oom_kills(const std::string& proc_self_cgroup,
                                              const std::string& cgroup_root) {
  const auto cgroups = read_text(proc_self_cgroup);
  if (!cgroups) return std::nullopt;
  // "0::/path" (v2, the unified hierarchy) or "4:memory:/path" (v1's memory controller).
  std::istringstream lines(*cgroups);
  for (std::string line; std::getline(lines, line);) {
    const auto first = line.find(':');
    const auto second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    std::optional<std::string> text;
    if (controllers == "memory")
      text = read_text(cgroup_root + "/memory" + path + "/memory.oom_control");
    else if (controllers.empty() && line.compare(0, first, "0") == 0)
      text = read_text(cgroup_root + path + "/memory.events");
    if (!text) continue;
    if (const auto n = parse_oom_kill(*text)) return n;
  }
  return std::nullopt;
}

}  // namespace gpumon::host
