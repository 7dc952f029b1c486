// SPDX-License-Identifier: MIT
// A writer of the Prometheus text exposition format 0.0.4 (docs/exporter.md, and the format's
// rules in ../shared/reference/ecosystem-and-reliability.md A1): one HELP and one TYPE line per
// family, written just before its first sample so a family without samples leaves no trace;
// every family one contiguous group; label values and HELP escaped; numbers locale-free.
//
// Thread-safety: none (one writer per body). The free functions are pure.
#pragma once

#include <initializer_list>
#include <set>
#include <span>
#include <string>
#include <string_view>

namespace gpumon::exporter {

/// The exact Content-Type of /metrics. Prometheus 3 refuses a scrape whose type it cannot parse
/// (a comma instead of a semicolon is enough), so this string is unit-tested byte for byte.
inline constexpr std::string_view kPrometheusContentType =
    "text/plain; version=0.0.4; charset=utf-8";

/// kSummary: a summary family without quantiles, its samples written with sample_suffixed()
/// (`_sum`, `_count`), so rate(x_sum) / rate(x_count) is the mean. kHistogram: the same plus
/// cumulative `_bucket{le="..."}` samples, ending with le="+Inf" (equal to `_count`).
enum class MetricType { kGauge, kCounter, kSummary, kHistogram, kUntyped };
std::string_view to_string(MetricType type);

struct Label {
  std::string_view name;
  std::string_view value;  ///< any bytes; escaped on output (the caller makes it valid UTF-8)
};

/// `[a-zA-Z_:][a-zA-Z0-9_:]*`, not starting with "__".
bool valid_metric_name(std::string_view name);
/// `[a-zA-Z_][a-zA-Z0-9_]*`, not starting with "__".
bool valid_label_name(std::string_view name);

/// Appends `value` with `\` -> `\\`, `"` -> `\"`, newline -> `\n`.
void append_label_value(std::string& out, std::string_view value);
/// Appends `text` with `\` -> `\\`, newline -> `\n` (HELP text keeps its quotes).
void append_help_text(std::string& out, std::string_view text);
/// Appends the shortest decimal that reads back as `value` (std::to_chars: no locale), or
/// exactly `NaN`, `+Inf`, `-Inf`.
void append_number(std::string& out, double value);

class ExpositionWriter {
 public:
  /// Appends to `out`, which must outlive the writer.
  explicit ExpositionWriter(std::string& out) : out_(out) {}

  /// Starts family `name`: the following sample() calls belong to it. `help` and `name` must
  /// stay valid until the next family() call. Throws std::invalid_argument for an invalid name
  /// and std::logic_error when `name` was already started (its group would not be contiguous).
  void family(std::string_view name, std::string_view help, MetricType type);

  /// One sample of the current family. Throws std::logic_error before family(), and
  /// std::invalid_argument for an invalid label name.
  void sample(std::span<const Label> labels, double value);
  void sample(std::initializer_list<Label> labels, double value) {
    sample(std::span<const Label>(labels.begin(), labels.size()), value);
  }
  /// A sample named the family's name + `suffix` ("_sum", "_count" of a summary); the same
  /// checks as sample(). `suffix` must be a valid continuation of a metric name.
  void sample_suffixed(std::string_view suffix, std::span<const Label> labels, double value);
  void sample_suffixed(std::string_view suffix, std::initializer_list<Label> labels, double value) {
    sample_suffixed(suffix, std::span<const Label>(labels.begin(), labels.size()), value);
  }

  /// Families that wrote at least one sample.
  std::size_t families_written() const { return written_; }

 private:
  std::string& out_;
  std::set<std::string, std::less<>> started_;
  std::string_view name_;
  std::string_view help_;
  MetricType type_ = MetricType::kUntyped;
  bool open_ = false;
  bool header_done_ = false;
  std::size_t written_ = 0;
};

}  // namespace gpumon::exporter
