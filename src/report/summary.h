// SPDX-License-Identifier: MIT
// The report's summary table and the comparison with a baseline run, as plain text cells
// (escaped by the page writer). Thresholds of the verdicts: docs/report.md.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/run_report.h"

namespace gpumon::report {

struct SummaryRow {
  std::string label;
  std::string value;
};

/// Duration, GPUs, samples, steps, utilization, SM activity, memory, energy, throttling, XIDs,
/// lost GPUs, health score; what the run did not record says "not recorded" (the page writer
/// fills the health score's deductions in from the diagnosis).
std::vector<SummaryRow> summary_rows(const RunTotals& t);

/// kInfo: shown, not judged ("changed"); kNotComparable: the runs did different work for this
/// figure (ComparisonRow::why says what differs); kMissing: a run lacks the figure ("n/a").
enum class Verdict { kBetter, kWorse, kSame, kInfo, kNotComparable, kMissing };
std::string_view verdict_text(Verdict v);

struct ComparisonRow {
  std::string label;
  std::string run, baseline, change;
  Verdict verdict = Verdict::kInfo;
  std::string why = {};  ///< with kNotComparable: what differs, e.g. "runs of different length"
};

/// Each figure of `run` beside `baseline`'s, judged by the thresholds of docs/report.md.
/// Energy is judged per step (per second of run where either run has no steps), and not at all
/// across different GPUs; the total only between runs of the same length, GPUs and steps.
std::vector<ComparisonRow> compare_runs(const RunTotals& run, const RunTotals& baseline);

/// The unit of temperatures everywhere on the page (UTF-8; the page's charset).
inline constexpr const char* kDegreesC = " \u00b0C";

/// `v` with exactly `decimals` decimals and a '.', whatever the locale.
std::string fixed(double v, int decimals);
/// "1 h 02 min 03 s", "42.5 s".
std::string format_duration(double seconds);
std::string format_bytes_gib(double bytes);
/// "2026-11-29T20:01:53.123Z" (UTC), or "n/a" when unknown.
std::string format_time(std::optional<std::int64_t> unix_ms);
std::string format_energy(double joules);

}  // namespace gpumon::report
