// SPDX-License-Identifier: MIT
#include "cli/format_units.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <ctime>
#include <utility>

#include "gpu/gpu_types.h"
#include "gpu/throttle.h"

namespace gpumon::cli {
namespace {

constexpr double kKiB = 1024.0;
constexpr double kMiB = kKiB * 1024.0;
constexpr double kGiB = kMiB * 1024.0;
constexpr double kTiB = kGiB * 1024.0;

std::tm split_time(std::chrono::system_clock::time_point t, bool utc) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  if (utc) {
    gmtime_r(&secs, &tm);
  } else {
    localtime_r(&secs, &tm);
  }
  return tm;
}

}  // namespace

std::string_view missing_token(Missing why) {
  switch (why) {
    case Missing::kNotAvailable: return "N/A";
    case Missing::kNotSupported: return "n/s";
    case Missing::kNoPermission: return "denied";
    case Missing::kGpuLost: return "lost";
    case Missing::kError: return "err";
    case Missing::kStale: return "stale";
    case Missing::kDeprecated: return "deprecated";
  }
  return "err";
}

std::string gib(std::uint64_t bytes) {
  return fmt::format("{:.1f}", static_cast<double>(bytes) / kGiB);
}

std::string short_bytes(std::uint64_t bytes) {
  const auto b = static_cast<double>(bytes);
  if (b >= kTiB) return fmt::format("{:.1f} TiB", b / kTiB);
  if (b >= kGiB) return fmt::format("{:.1f} GiB", b / kGiB);
  if (b >= kMiB) return fmt::format("{:.0f} MiB", std::floor(b / kMiB));
  if (b >= kKiB) return fmt::format("{:.0f} KiB", std::floor(b / kKiB));
  return fmt::format("{} B", bytes);
}

std::string bar(double fraction, std::size_t width) {
  if (!(fraction >= 0.0)) fraction = 0.0;  // NaN too
  fraction = std::min(fraction, 1.0);
  auto filled = static_cast<std::size_t>(std::lround(fraction * static_cast<double>(width)));
  // Only a truly full GPU shows a full bar.
  if (filled == width && fraction < 1.0 && width > 0) filled = width - 1;
  std::string out = "[";
  out.append(filled, '#');
  out.append(width - filled, '.');
  out += ']';
  return out;
}

std::string local_time_text(std::chrono::system_clock::time_point t) {
  const std::tm tm = split_time(t, false);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02} {}", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     tm.tm_zone != nullptr ? tm.tm_zone : "");
}

std::string utc_time_text(std::chrono::system_clock::time_point t) {
  const std::tm tm = split_time(t, true);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count() % 1000;
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms < 0 ? ms + 1000 : ms);
}

std::vector<ClockEventWord> clock_event_words(std::uint64_t mask) {
  struct Entry {
    std::uint64_t bit;
    const char* text;
  };
  static constexpr std::array<Entry, 9> kWords{{
      {kClockEventGpuIdle, "idle"},
      {kClockEventApplicationsClocksSetting, "app clock setting"},
      {kClockEventSwPowerCap, "power cap"},
      {kClockEventHwSlowdown, "HW slowdown"},
      {kClockEventSyncBoost, "sync boost"},
      {kClockEventSwThermalSlowdown, "thermal slowdown"},
      {kClockEventHwThermalSlowdown, "HW thermal slowdown"},
      {kClockEventHwPowerBrakeSlowdown, "power brake"},
      {kClockEventDisplayClockSetting, "display clock setting"},
  }};
  std::vector<ClockEventWord> out;
  std::uint64_t known = 0;
  for (const Entry& e : kWords) {
    known |= e.bit;
    if ((mask & e.bit) != 0) out.push_back({e.text, (e.bit & kThrottleReasonMask) != 0});
  }
  if ((mask & ~known) != 0) out.push_back({fmt::format("other (0x{:x})", mask & ~known), true});
  return out;
}

}  // namespace gpumon::cli
