// SPDX-License-Identifier: MIT
#include "report/summary.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace gpumon::report {
namespace {

constexpr std::string_view kNotRecorded = "not recorded";
// Runs whose lengths differ by less than this share did the same length of work: below the
// threshold of the energy verdicts, so a length difference alone cannot decide them.
constexpr double kSameLength = 0.05;

std::string opt(const std::optional<double>& v, int decimals, std::string_view unit) {
  if (!v) return "n/a";
  return fixed(*v, decimals) + std::string(unit);
}

// How a figure is judged against the baseline.
enum class Better { kHigher, kLower, kNeither };

struct Figure {
  std::string label;
  std::optional<double> run, base;
  Better better;
  double same_within;  ///< absolute difference still called "same"
  bool relative;       ///< same_within is a share of the baseline's value
  std::string (*format)(double);
  std::string not_comparable = {};  ///< what makes the runs' figures measure different work
};

ComparisonRow judge(const Figure& f) {
  ComparisonRow row{f.label, f.run ? f.format(*f.run) : "n/a", f.base ? f.format(*f.base) : "n/a",
                    "", Verdict::kMissing};
  if (!f.run || !f.base) return row;
  const double diff = *f.run - *f.base;
  const double limit = f.relative ? std::abs(*f.base) * f.same_within : f.same_within;
  row.change = (diff >= 0 ? "+" : "-") + f.format(std::abs(diff));
  if (*f.base != 0) row.change += " (" + fixed(100 * diff / std::abs(*f.base), 1) + " %)";
  if (!f.not_comparable.empty()) {
    row.verdict = Verdict::kNotComparable;
    row.why = f.not_comparable;
  } else if (f.better == Better::kNeither) {
    row.verdict = Verdict::kInfo;
  } else if (std::abs(diff) <= limit) {
    row.verdict = Verdict::kSame;
  } else {
    row.verdict = (diff > 0) == (f.better == Better::kHigher) ? Verdict::kBetter : Verdict::kWorse;
  }
  return row;
}

std::optional<double> as_double(const std::optional<int>& v) {
  return v ? std::optional<double>(*v) : std::nullopt;
}

std::string gpus_text(const RunTotals& t) {
  return std::to_string(t.gpus) + (t.gpu_models.empty() ? "" : " x " + t.gpu_models);
}

// What makes any energy figure of the two runs measure different hardware; "" when nothing.
std::string hardware_differs(const RunTotals& a, const RunTotals& b) {
  if (a.gpus != b.gpus || a.gpu_models != b.gpu_models)
    return "different GPUs (" + gpus_text(a) + " vs " + gpus_text(b) + ")";
  return {};
}

// What makes the runs' totals measure different work; "" when nothing.
std::string work_differs(const RunTotals& a, const RunTotals& b) {
  if (auto why = hardware_differs(a, b); !why.empty()) return why;
  if (!a.duration_s || !b.duration_s) return "a run's length is unknown";
  if (std::abs(*a.duration_s - *b.duration_s) >
      kSameLength * std::max(*a.duration_s, *b.duration_s))
    return "runs of different length (" + format_duration(*a.duration_s) + " vs " +
           format_duration(*b.duration_s) + ")";
  if (a.steps != b.steps)
    return a.steps && b.steps
               ? "different step counts (" + fixed(*a.steps, 0) + " vs " + fixed(*b.steps, 0) + ")"
               : "steps recorded in one run only";
  return {};
}

std::optional<double> energy_per_s(const RunTotals& t) {
  if (!t.energy_j || !t.duration_s || *t.duration_s <= 0) return std::nullopt;
  return *t.energy_j / *t.duration_s;
}

}  // namespace

std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  if (r.ec != std::errc()) return "n/a";
  std::string s(buf, r.ptr);
  if (s.starts_with("-") && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

std::string format_duration(double seconds) {
  if (seconds < 60) return fixed(seconds, 1) + " s";
  const auto total = static_cast<long long>(std::llround(seconds));
  const long long h = total / 3600, m = total / 60 % 60, s = total % 60;
  auto two = [](long long x) { return (x < 10 ? "0" : "") + std::to_string(x); };
  if (h == 0) return std::to_string(m) + " min " + two(s) + " s";
  return std::to_string(h) + " h " + two(m) + " min " + two(s) + " s";
}

std::string format_time(std::optional<std::int64_t> unix_ms) {
  return unix_ms ? record::format_iso_ms(*unix_ms) : "n/a";
}

std::string format_bytes_gib(double bytes) {
  return fixed(bytes / (1024.0 * 1024.0 * 1024.0), 2) + " GiB";
}

std::string format_energy(double joules) {
  if (joules < 1e6) return fixed(joules / 1000, 2) + " kJ";
  return fixed(joules / 3.6e6, 3) + " kWh";
}

std::vector<SummaryRow> summary_rows(const RunTotals& t) {
  std::vector<SummaryRow> rows;
  rows.push_back({"Duration", t.duration_s ? format_duration(*t.duration_s) : "n/a"});
  rows.push_back({"GPUs", std::to_string(t.gpus)});
  rows.push_back({"GPU-samples", std::to_string(t.samples)});
  rows.push_back({"Steps", t.steps ? fixed(*t.steps, 0) : std::string(kNotRecorded)});
  rows.push_back({"Mean step time", t.mean_step_s ? fixed(*t.mean_step_s * 1000, 1) + " ms"
                                                  : std::string(kNotRecorded)});
  // Steps without a share: their loader was not timed (the ranks table says so too).
  rows.push_back({"Time waiting on data", t.data_wait_share
                                              ? fixed(*t.data_wait_share * 100, 1) + " %"
                                          : t.steps ? std::string("not measured")
                                                    : std::string(kNotRecorded)});
  rows.push_back({"Mean GPU utilization", opt(t.mean_util_pct, 1, " %")});
  rows.push_back({"Mean SM activity", opt(t.mean_sm_active_pct, 1, " %")});
  rows.push_back({"Peak memory used (one GPU)",
                  t.peak_memory_bytes ? format_bytes_gib(*t.peak_memory_bytes) : "n/a"});
  rows.push_back({"Mean power (per GPU)", opt(t.mean_power_w, 1, " W")});
  rows.push_back({"Energy (all GPUs)", t.energy_j ? format_energy(*t.energy_j) : "n/a"});
  rows.push_back({"Energy per step", t.energy_per_step_j ? fixed(*t.energy_per_step_j, 1) + " J"
                                     : t.steps           ? "n/a"
                                                         : std::string(kNotRecorded)});
  rows.push_back(
      {"Time throttled", t.throttle_share ? fixed(*t.throttle_share * 100, 1) + " %" : "n/a"});
  rows.push_back({"Highest GPU temperature", opt(t.max_temp_c, 0, kDegreesC)});
  rows.push_back({"XID events", std::to_string(t.xids)});
  rows.push_back({"GPUs lost", std::to_string(t.lost_gpus)});
  rows.push_back({"Health score", std::string(kNotRecorded)});
  return rows;
}

std::string_view verdict_text(Verdict v) {
  switch (v) {
    case Verdict::kBetter: return "better";
    case Verdict::kWorse: return "worse";
    case Verdict::kSame: return "same";
    case Verdict::kInfo: return "changed";
    case Verdict::kNotComparable: return "not comparable";
    case Verdict::kMissing: return "n/a";
  }
  return "n/a";
}

std::vector<ComparisonRow> compare_runs(const RunTotals& run, const RunTotals& base) {
  static constexpr auto pct = +[](double v) { return fixed(v, 1) + " %"; };
  static constexpr auto watts = +[](double v) { return fixed(v, 1) + " W"; };
  static constexpr auto celsius = +[](double v) { return fixed(v, 0) + kDegreesC; };
  static constexpr auto count = +[](double v) { return fixed(v, 0); };
  static constexpr auto share = +[](double v) { return fixed(v * 100, 1) + " %"; };
  static constexpr auto step_ms = +[](double v) { return fixed(v * 1000, 1) + " ms"; };
  static constexpr auto joules = +[](double v) { return fixed(v, 1) + " J"; };
  static constexpr auto joules_per_s = +[](double v) { return fixed(v, 1) + " J/s"; };
  const std::string hardware = hardware_differs(run, base);
  // Energy per second judges runs without steps; with steps on both, energy per step does.
  const bool both_steps = run.energy_per_step_j && base.energy_per_step_j;
  std::vector<Figure> figures{
      {"Duration", run.duration_s, base.duration_s, Better::kNeither, 0, false, format_duration},
      {"Steps", run.steps, base.steps, Better::kNeither, 0, false, count},
      {"Mean step time", run.mean_step_s, base.mean_step_s, Better::kLower, 0.02, true, step_ms},
      {"Time waiting on data", run.data_wait_share, base.data_wait_share, Better::kLower, 0.01,
       false, share},
      {"Energy per step", run.energy_per_step_j, base.energy_per_step_j, Better::kLower, 0.05, true,
       joules, hardware},
      {"Energy per second of run (all GPUs)", energy_per_s(run), energy_per_s(base),
       both_steps ? Better::kNeither : Better::kLower, 0.05, true, joules_per_s, hardware},
      {"Mean GPU utilization", run.mean_util_pct, base.mean_util_pct, Better::kHigher, 2, false,
       pct},
      {"Mean SM activity", run.mean_sm_active_pct, base.mean_sm_active_pct, Better::kHigher, 2,
       false, pct},
      {"Peak memory used (one GPU)", run.peak_memory_bytes, base.peak_memory_bytes,
       Better::kNeither, 0, false, format_bytes_gib},
      {"Mean power (per GPU)", run.mean_power_w, base.mean_power_w, Better::kNeither, 0, false,
       watts},
      {"Energy (all GPUs)", run.energy_j, base.energy_j, Better::kLower, 0.05, true, format_energy,
       work_differs(run, base)},
      {"Time throttled", run.throttle_share, base.throttle_share, Better::kLower, 0.01, false,
       share},
      {"Highest GPU temperature", run.max_temp_c, base.max_temp_c, Better::kLower, 2, false,
       celsius},
      {"XID events", as_double(run.xids), as_double(base.xids), Better::kLower, 0, false, count},
      {"GPUs lost", as_double(run.lost_gpus), as_double(base.lost_gpus), Better::kLower, 0, false,
       count},
      {"Health score", run.health_score, base.health_score, Better::kHigher, 2, false, count},
  };
  std::vector<ComparisonRow> rows;
  for (const auto& f : figures) rows.push_back(judge(f));
  ComparisonRow gpus{"GPUs", gpus_text(run), gpus_text(base), "", Verdict::kSame};
  if (!hardware.empty()) gpus.verdict = Verdict::kInfo;
  rows.insert(rows.begin() + 1, std::move(gpus));
  return rows;
}

}  // namespace gpumon::report
