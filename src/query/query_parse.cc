// SPDX-License-Identifier: MIT
#include "query/query_parse.h"

#include <charconv>
#include <cmath>
#include <system_error>

namespace gpumon::query {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Whole-string unsigned decimal; no sign, no blanks.
bool parse_unsigned(std::string_view text, std::uint64_t* value) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::string quote_for_message(std::string_view text) {
  constexpr std::size_t kMax = 40;
  std::string out = "\"";
  for (char c : text.substr(0, kMax)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? '?' : c;
  }
  if (text.size() > kMax) out += "...";
  out += '"';
  return out;
}

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> out;
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

Expected<OutputFormat> parse_format(std::string_view text) {
  OutputFormat format;
  bool csv = false, json = false, jsonl = false, modifier = false;
  const std::vector<std::string> items = split_list(text);
  if (items.empty())
    return usage_error(
        "--format is empty; use csv[,noheader][,nounits], json, jsonl, json-flat or jsonl-flat.");
  for (const std::string& item : items) {
    if (item == "csv") {
      csv = true;
    } else if (item == "noheader") {
      format.header = false;
      modifier = true;
    } else if (item == "nounits") {
      format.units = false;
      modifier = true;
    } else if (item == "json" || item == "json-flat") {
      json = true;
      format.flat = item == "json-flat";
    } else if (item == "jsonl" || item == "jsonl-flat") {
      jsonl = true;
      format.flat = item == "jsonl-flat";
    } else {
      return QueryError{kExitUsage,
                        "Format modifier is not recognized.\ngpumon: " + quote_for_message(item) +
                            " is not one of csv, noheader, nounits, json, jsonl, "
                            "json-flat, jsonl-flat.\n"};
    }
  }
  if (int{csv} + int{json} + int{jsonl} > 1) {
    return usage_error(
        "--format takes one of csv, json and jsonl (or their -flat forms), not several.");
  }
  if ((json || jsonl) && modifier) {
    return usage_error("noheader and nounits apply to csv only; json and jsonl take no modifier.");
  }
  if (json) format.kind = OutputFormat::Kind::kJson;
  if (jsonl) format.kind = OutputFormat::Kind::kJsonLines;
  return format;
}

Expected<std::chrono::milliseconds> parse_loop_seconds(std::string_view text) {
  const auto bad = [&] {
    return usage_error("--loop wants a positive number of seconds (e.g. 1 or 0.5), got " +
                       quote_for_message(text) + ".");
  };
  double seconds = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(seconds) || seconds <= 0) {
    return bad();
  }
  if (seconds > static_cast<double>(kMaxInterval.count()) / 1000.0) {
    return usage_error("--loop " + quote_for_message(text) +
                       " is longer than the maximum of one week.");
  }
  const auto ms = static_cast<std::int64_t>(std::llround(seconds * 1000.0));
  if (ms < 1) return usage_error("--loop " + quote_for_message(text) + " is shorter than 1 ms.");
  return std::chrono::milliseconds(ms);
}

Expected<std::chrono::milliseconds> parse_loop_ms(std::string_view text) {
  std::uint64_t ms = 0;
  if (!parse_unsigned(text, &ms) || ms == 0) {
    return usage_error("--loop-ms wants a positive whole number of milliseconds, got " +
                       quote_for_message(text) + ".");
  }
  if (ms > static_cast<std::uint64_t>(kMaxInterval.count())) {
    return usage_error("--loop-ms " + quote_for_message(text) +
                       " is longer than the maximum of one week.");
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(ms));
}

Expected<std::uint64_t> parse_count(std::string_view text) {
  std::uint64_t n = 0;
  if (!parse_unsigned(text, &n) || n == 0) {
    return usage_error("--count wants a whole number of samples, 1 or more, got " +
                       quote_for_message(text) + ".");
  }
  return n;
}

}  // namespace gpumon::query
