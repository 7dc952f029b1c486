// SPDX-License-Identifier: MIT
#include "host/proc_parse.h"

#include <charconv>
#include <vector>

namespace gpumon::host {
namespace {

template <typename T>
std::optional<T> to_number(std::string_view s) {
  T value{};
  const auto* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

// Splits on runs of spaces and tabs.
std::vector<std::string_view> split_fields(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '\n') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
    if (i < s.size() && s[i] == '\n') ++i;
  }
  return out;
}

// Calls fn(line) for each line of `text`.
template <typename Fn>
void for_each_line(std::string_view text, Fn fn) {
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    fn(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

std::optional<ProcStat> parse_stat(std::string_view text) {
  const std::size_t open = text.find('(');
  const std::size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return std::nullopt;
  }
  ProcStat st;
  st.comm = std::string(text.substr(open + 1, close - open - 1));
  // Field 3 (state) is the first token after the last ')'.
  const std::vector<std::string_view> f = split_fields(text.substr(close + 1));
  constexpr std::size_t kState = 0, kPpid = 1, kUtime = 11, kStime = 12, kStart = 19, kRss = 21;
  if (f.size() <= kRss || f[kState].size() != 1) return std::nullopt;
  st.state = f[kState][0];
  const auto ppid = to_number<unsigned>(f[kPpid]);
  const auto utime = to_number<std::uint64_t>(f[kUtime]);
  const auto stime = to_number<std::uint64_t>(f[kStime]);
  const auto start = to_number<std::uint64_t>(f[kStart]);
  // rss is signed in the kernel's format string; a negative value is corrupt input.
  const auto rss = to_number<std::int64_t>(f[kRss]);
  if (!ppid || !utime || !stime || !start || !rss || *rss < 0) return std::nullopt;
  st.ppid = *ppid;
  st.utime_ticks = *utime;
  st.stime_ticks = *stime;
  st.start_ticks = *start;
  st.rss_pages = static_cast<std::uint64_t>(*rss);
  return st;
}

ProcStatus parse_status(std::string_view text) {
  ProcStatus out;
  for_each_line(text, [&](std::string_view line) {
    if (starts_with(line, "Uid:")) {
      const auto f = split_fields(line.substr(4));
      if (f.size() >= 2) {
        out.real_uid = to_number<unsigned>(f[0]);
        out.effective_uid = to_number<unsigned>(f[1]);
      }
    }
  });
  return out;
}

std::optional<double> parse_uptime_seconds(std::string_view text) {
  const auto f = split_fields(text);
  if (f.empty()) return std::nullopt;
  const auto v = to_number<double>(f[0]);
  if (!v || !(*v >= 0.0)) return std::nullopt;
  return v;
}

std::optional<std::int64_t> parse_boot_time(std::string_view proc_stat_text) {
  std::optional<std::int64_t> out;
  for_each_line(proc_stat_text, [&](std::string_view line) {
    if (!starts_with(line, "btime ")) return;
    const auto f = split_fields(line.substr(6));
    if (f.size() == 1) out = to_number<std::int64_t>(f[0]);
  });
  return out;
}

std::optional<CpuTimes> parse_cpu_times(std::string_view proc_stat_text) {
  std::optional<CpuTimes> out;
  unsigned cpus = 0;
  for_each_line(proc_stat_text, [&](std::string_view line) {
    if (starts_with(line, "cpu ")) {
      // user nice system idle iowait irq softirq steal (guest time is inside user already)
      const auto f = split_fields(line.substr(4));
      if (f.size() < 4) return;
      CpuTimes t;
      for (std::size_t i = 0; i < f.size() && i < 8; ++i) {
        const auto v = to_number<std::uint64_t>(f[i]);
        if (!v) return;
        t.total += *v;
        if (i != 3 && i != 4) t.busy += *v;
      }
      out = t;
    } else if (starts_with(line, "cpu")) {
      ++cpus;
    }
  });
  if (out) out->cpus = cpus;
  return out;
}

bool proc_hides_other_users(std::string_view mountinfo, std::string_view mount_point) {
  bool hides = false;
  for_each_line(mountinfo, [&](std::string_view line) {
    // "36 25 0:5 / /proc rw,nosuid shared:12 - proc proc rw,hidepid=2"
    const auto f = split_fields(line);
    if (f.size() < 5 || f[4] != mount_point) return;
    std::size_t dash = 5;
    while (dash < f.size() && f[dash] != "-") ++dash;
    if (dash + 3 >= f.size() || f[dash + 1] != "proc") return;
    bool this_hides = false;
    std::string_view opts = f[dash + 3];
    while (!opts.empty()) {
      const std::size_t comma = opts.find(',');
      const std::string_view opt = opts.substr(0, comma);
      if (opt == "hidepid=2" || opt == "hidepid=invisible" || opt == "hidepid=4" ||
          opt == "hidepid=ptraceable") {
        this_hides = true;
      }
      if (comma == std::string_view::npos) break;
      opts.remove_prefix(comma + 1);
    }
    hides = this_hides;  // the last mount on the path is the one that is visible
  });
  return hides;
}

}  // namespace gpumon::host
