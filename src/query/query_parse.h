// SPDX-License-Identifier: MIT
// Parsers for the values of `gpumon query`'s options: --format, the field lists, --loop,
// --loop-ms and --count. Pure functions over strings (fuzzed by query_args_fuzz.cc): they never
// throw, and report a problem as a QueryError whose message names it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "query/field.h"
#include "query/query_error.h"

namespace gpumon::query {

/// What --format asked for.
struct OutputFormat {
  enum class Kind { kCsv, kJson, kJsonLines };
  Kind kind = Kind::kCsv;
  bool header = true;  ///< csv only: false with "noheader"
  bool units = true;   ///< csv only: false with "nounits"
  /// json/jsonl only: gpumon's flat rows ("json-flat", "jsonl-flat": dotted field names as keys,
  /// base units) instead of nvidia-smi's shape (nested objects, nvidia-smi's units).
  bool flat = false;
  friend bool operator==(const OutputFormat&, const OutputFormat&) = default;
};

/// Parses "csv[,noheader][,nounits]", "json", "jsonl", "json-flat" or "jsonl-flat". Modifiers
/// alone imply csv (as csv is nvidia-smi's default); the JSON forms take no modifier.
Expected<OutputFormat> parse_format(std::string_view text);

/// Splits a comma list and trims blanks around each item. Empty items are skipped, as
/// nvidia-smi's tokenizer does ("index,,name," is "index,name").
std::vector<std::string> split_list(std::string_view text);

/// `text` in double quotes for an error message: at most 40 characters, control characters
/// shown as '?'.
std::string quote_for_message(std::string_view text);

/// Longest loop interval accepted: one week (keeps the schedule's arithmetic far from overflow).
inline constexpr std::chrono::milliseconds kMaxInterval{7LL * 24 * 3600 * 1000};

/// --loop's value: positive seconds, decimals allowed ("5", "0.5"), at most kMaxInterval,
/// at least 1 ms.
Expected<std::chrono::milliseconds> parse_loop_seconds(std::string_view text);
/// --loop-ms's value: a positive whole number of milliseconds, at most kMaxInterval.
Expected<std::chrono::milliseconds> parse_loop_ms(std::string_view text);
/// --count's value: a whole number >= 1.
Expected<std::uint64_t> parse_count(std::string_view text);

/// Resolves a field list against a registry. Unknown names get nvidia-smi's exact message;
/// an empty list is an error naming `option`. Duplicates are kept (nvidia-smi prints them twice).
template <typename Source>
Expected<std::vector<const FieldSpec<Source>*>> resolve_fields(
    const std::vector<FieldSpec<Source>>& table, std::string_view list, std::string_view option) {
  std::vector<const FieldSpec<Source>*> out;
  for (const std::string& name : split_list(list)) {
    const FieldSpec<Source>* spec = find_field(table, name);
    if (spec == nullptr) {
      return QueryError{kExitUsage, "Field \"" + name + "\" is not a valid field to query.\n\n"};
    }
    out.push_back(spec);
  }
  if (out.empty()) {
    return usage_error(std::string(option) + " names no field; give at least one (gpumon query " +
                       "--help" + std::string(option.substr(1)) + " lists them).");
  }
  return out;
}

}  // namespace gpumon::query
