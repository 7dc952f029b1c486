// SPDX-License-Identifier: MIT
#include "query/value_format.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>

namespace gpumon::query {
namespace {

constexpr std::uint64_t kMibMask = (std::uint64_t{1} << 20) - 1;

std::string sanitized(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = '?';
  }
  return out;
}

// The value without its unit, in the field's CSV style.
std::string csv_text(const Scalar& value, CsvStyle style) {
  if (const auto* text = std::get_if<std::string>(&value)) return sanitized(*text);
  if (const auto* when = std::get_if<WallTime>(&value)) {
    return format_csv_timestamp(to_local_time(*when));
  }
  if (const auto* flag = std::get_if<bool>(&value)) {
    if (style == CsvStyle::kActive) return *flag ? "Active" : "Not Active";
    return *flag ? "Enabled" : "Disabled";
  }
  if (const auto* real = std::get_if<double>(&value)) {
    return style == CsvStyle::kFixed3 ? fmt::format("{:.3f}", *real) : fmt::format("{:.2f}", *real);
  }
  if (const auto* signed_n = std::get_if<std::int64_t>(&value)) return fmt::format("{}", *signed_n);
  const std::uint64_t n = std::get<std::uint64_t>(value);
  switch (style) {
    // Rounded up, as nvidia-smi does (H200, driver 580: 644939776 B = 615.06 MiB prints 616).
    case CsvStyle::kMib: return fmt::format("{}", (n >> 20) + ((n & kMibMask) != 0 ? 1 : 0));
    case CsvStyle::kPstate: return fmt::format("P{}", n);
    case CsvStyle::kHexMask: return fmt::format("0x{:016x}", n);
    default: return fmt::format("{}", n);
  }
}

}  // namespace

std::string_view missing_token(Missing why) {
  switch (why) {
    case Missing::kNotAvailable: return "[N/A]";
    case Missing::kNotSupported: return "[Not Supported]";
    case Missing::kNoPermission: return "[Insufficient Permissions]";
    case Missing::kGpuLost: return "[GPU is lost]";
    case Missing::kError: return "[Unknown Error]";
    case Missing::kStale: return "[Timeout]";
    case Missing::kDeprecated: return "[Requested functionality has been deprecated]";
  }
  return "[Unknown Error]";
}

std::string_view missing_json_name(Missing why) {
  switch (why) {
    case Missing::kNotAvailable: return "not_available";
    case Missing::kNotSupported: return "not_supported";
    case Missing::kNoPermission: return "no_permission";
    case Missing::kGpuLost: return "gpu_lost";
    case Missing::kError: return "error";
    case Missing::kStale: return "stale";
    case Missing::kDeprecated: return "deprecated";
  }
  return "error";
}

std::string csv_cell(const Cell& cell, const FieldInfo& field, bool units) {
  if (!cell.has_value()) {
    if (cell.why() == Missing::kNotSupported && field.not_supported_reads_na) return "[N/A]";
    return std::string(missing_token(cell.why()));
  }
  std::string text = csv_text(*cell, field.csv);
  if (units && !field.csv_unit.empty()) {
    text += ' ';
    text += field.csv_unit;
  }
  return text;
}

nlohmann::ordered_json json_value(const Scalar& value) {
  if (const auto* text = std::get_if<std::string>(&value)) return *text;
  if (const auto* n = std::get_if<std::uint64_t>(&value)) return *n;
  if (const auto* n = std::get_if<std::int64_t>(&value)) return *n;
  if (const auto* real = std::get_if<double>(&value)) return *real;
  if (const auto* flag = std::get_if<bool>(&value)) return *flag;
  return format_iso_timestamp(to_local_time(std::get<WallTime>(value)));
}

nlohmann::ordered_json nvidia_smi_json_value(const Scalar& value, const FieldInfo& field) {
  if (const auto* text = std::get_if<std::string>(&value)) return *text;
  const std::string shown = csv_text(value, field.csv);
  if (const auto* n = std::get_if<std::int64_t>(&value)) return *n;
  const bool number =
      std::holds_alternative<std::uint64_t>(value) || std::holds_alternative<double>(value);
  if (number && (field.csv == CsvStyle::kPlain || field.csv == CsvStyle::kMib ||
                 field.csv == CsvStyle::kFixed2 || field.csv == CsvStyle::kFixed3)) {
    const char* end = shown.data() + shown.size();
    if (shown.find('.') == std::string::npos) {
      std::uint64_t n = 0;
      if (auto [p, ec] = std::from_chars(shown.data(), end, n); ec == std::errc() && p == end)
        return n;
    } else {
      double real = 0;
      if (auto [p, ec] = std::from_chars(shown.data(), end, real); ec == std::errc() && p == end)
        return real;
    }
  }
  return shown;
}

LocalTime to_local_time(WallTime t) {
  using std::chrono::milliseconds;
  // floor, not truncation, so times before 1970 still get 0..999 ms.
  const auto ms = std::chrono::floor<milliseconds>(t.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  LocalTime out;
  out.millis = static_cast<int>(ms - static_cast<long long>(secs) * 1000);
  localtime_r(&secs, &out.tm);
  out.utc_offset_s = out.tm.tm_gmtoff;
  return out;
}

std::string format_csv_timestamp(const LocalTime& t) {
  return fmt::format("{:04}/{:02}/{:02} {:02}:{:02}:{:02}.{:03}", t.tm.tm_year + 1900,
                     t.tm.tm_mon + 1, t.tm.tm_mday, t.tm.tm_hour, t.tm.tm_min, t.tm.tm_sec,
                     t.millis);
}

std::string format_iso_timestamp(const LocalTime& t) {
  const long offset_min = std::labs(t.utc_offset_s) / 60;
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}{}{:02}:{:02}", t.tm.tm_year + 1900,
                     t.tm.tm_mon + 1, t.tm.tm_mday, t.tm.tm_hour, t.tm.tm_min, t.tm.tm_sec,
                     t.millis, t.utc_offset_s < 0 ? '-' : '+', offset_min / 60, offset_min % 60);
}

}  // namespace gpumon::query
