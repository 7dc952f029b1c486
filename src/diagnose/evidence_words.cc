// SPDX-License-Identifier: MIT
#include "diagnose/evidence_words.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <utility>

namespace gpumon::diagnose {
namespace {

enum class Unit : std::uint8_t {
  kCount,   // plain number
  kShare,   // 0-1, written as %
  kPct,     // already %
  kPoints,  // a difference of two %
  kBytes,   // MiB or GiB
  kMs,
  kS,
  kMin,
  kMhz,
  kW,
  kCelsius,
  kRatio,  // x1.25
  kYesNo,  // 0 or 1
  kText,   // words (machine tokens mapped below)
};

// "{}" is where the value goes. `alone`: the subject when the key has no gpuN_/pidN_ prefix.
struct Phrase {
  std::string_view key;
  std::string_view text;
  Unit unit;
  std::string_view alone = {};
};

// clang-format off
constexpr std::array kPhrases{
  // data_loader_stall
  Phrase{"data_wait_share", "waiting on data {} of the step time", Unit::kShare, "the worst rank"},
  Phrase{"mean_data_wait_ms", "mean data wait {} a step", Unit::kMs},
  Phrase{"mean_step_ms", "mean step time {}", Unit::kMs},
  Phrase{"median_data_wait_ms", "median data wait {} a step", Unit::kMs},
  Phrase{"slowest_5pct_wait_share", "the slowest 5 % of steps hold {} of the wait", Unit::kShare},
  Phrase{"steps", "{} steps", Unit::kCount},
  Phrase{"worst_rank", "the worst is rank {}", Unit::kCount},
  Phrase{"ranks_stalled", "{} rank(s) stalled", Unit::kCount},
  Phrase{"mean_util_pct", "mean utilization {}", Unit::kPct},
  Phrase{"num_workers_seen", "{} DataLoader worker processes seen", Unit::kCount},
  Phrase{"load_ms_per_batch", "a batch takes {} to load", Unit::kMs},
  Phrase{"suggested_num_workers", "num_workers={} would keep up", Unit::kCount},
  // hang
  // step_pauses
  Phrase{"pause_share", "pauses took {} of the wall time", Unit::kShare},
  Phrase{"pauses", "{} pauses", Unit::kCount},
  Phrase{"median_pause_s", "a pause lasts {}", Unit::kS},
  Phrase{"usual_step_ms", "a step usually every {}", Unit::kMs},
  Phrase{"period_steps", "one pause every {} steps", Unit::kCount},
  Phrase{"period_s", "one pause every {}", Unit::kS},
  Phrase{"where", "the pause is {}", Unit::kText},
  Phrase{"first_paused_step", "the first at step {}", Unit::kCount},
  Phrase{"gap_s", "no step for {}", Unit::kS},
  Phrase{"usual_period_s", "a step usually every {}", Unit::kS},
  Phrase{"limit_s", "called a hang after {}", Unit::kS},
  Phrase{"at_end", "still silent at the end of the run: {}", Unit::kYesNo},
  Phrase{"died_silent", "a rank died silent: {}", Unit::kYesNo},
  Phrase{"util_during_gap_pct", "utilization during the gap {}", Unit::kPct},
  // hardware
  Phrase{"corrected", "{} corrected ECC error(s)", Unit::kCount},
  Phrase{"uncorrected", "{} uncorrected ECC error(s)", Unit::kCount},
  Phrase{"gpus_lost", "{} GPU(s) lost", Unit::kCount},
  // launch_bound
  Phrase{"sm_active", "SM activity {}", Unit::kShare},
  Phrase{"util_samples", "{} utilization samples", Unit::kCount},
  Phrase{"gpu_time_share", "GPU busy {} of the step time", Unit::kShare},
  Phrase{"sm_active_while_busy", "SM activity {} while NVML reports the GPU busy", Unit::kShare},
  Phrase{"busy_samples", "{} busy samples", Unit::kCount},
  // memory
  Phrase{"slope_bytes_per_step", "allocated memory grows {} a step", Unit::kBytes},
  Phrase{"allocator_summary_file", "allocator state written to {}", Unit::kText},
  Phrase{"allocation_history_file", "allocation history in {}", Unit::kText},
  Phrase{"growth_bytes", "allocated memory grew {}", Unit::kBytes},
  Phrase{"first_allocated_bytes", "{} allocated at first", Unit::kBytes},
  Phrase{"last_allocated_bytes", "{} allocated at last", Unit::kBytes},
  Phrase{"reserved_minus_allocated_bytes", "{} reserved but not allocated", Unit::kBytes},
  Phrase{"share_of_reserved", "{} of the reserved memory", Unit::kShare},
  Phrase{"inactive_split_bytes", "{} in inactive split blocks", Unit::kBytes},
  Phrase{"inactive_split_share", "{} of the reserved memory in inactive split blocks", Unit::kShare},
  Phrase{"new_alloc_retries", "{} allocation retries", Unit::kCount},
  Phrase{"caught_ooms", "{} out-of-memory error(s) caught", Unit::kCount},
  Phrase{"minutes_to_full", "memory full in {}", Unit::kMin},
  Phrase{"steps_to_full", "memory full in {} steps", Unit::kCount},
  Phrase{"growth_bytes_per_s", "memory grows {} a second", Unit::kBytes},
  Phrase{"free_bytes", "{} free", Unit::kBytes},
  Phrase{"source", "measured from {}", Unit::kText},
  Phrase{"ranks_oom", "{} rank(s) ran out of memory", Unit::kCount},
  Phrase{"bytes", "uses {} of GPU memory", Unit::kBytes},
  Phrase{"name", "is {}", Unit::kText},
  Phrase{"job", "belongs to {}", Unit::kText},
  Phrase{"max_foreign_bytes", "other processes use up to {} of a GPU", Unit::kBytes},
  // multi_gpu
  Phrase{"measure", "measured by {}", Unit::kText},
  Phrase{"ratio_vs_others", "{} the others", Unit::kRatio},
  Phrase{"slowest_share", "the slowest in {} of steps", Unit::kShare},
  Phrase{"aligned_steps", "{} steps compared across ranks", Unit::kCount},
  Phrase{"likely_cause", "likely cause: {}", Unit::kText},
  Phrase{"busy_gpus", "{} GPU(s) busy", Unit::kCount},
  Phrase{"world_size", "{} rank(s) in the job", Unit::kCount},
  Phrase{"memory_gap_bytes", "memory used differs by {} between GPUs", Unit::kBytes},
  Phrase{"most_memory_gpu", "GPU {} holds the most", Unit::kCount},
  Phrase{"util_cv", "utilization varies by {} between GPUs (coefficient of variation)", Unit::kShare},
  Phrase{"util_gap_pct", "utilization differs by {} between GPUs", Unit::kPoints},
  Phrase{"memory_cv", "memory used varies by {} between GPUs (coefficient of variation)", Unit::kShare},
  Phrase{"step_time_cv", "step time varies by {} between ranks (coefficient of variation)", Unit::kShare},
  // rank_wait
  Phrase{"gpu_time_vs_slowest", "GPU busy {} as long as the slowest rank's", Unit::kShare},
  Phrase{"busiest_gpu_share_of_step", "the busiest GPU busy {} of the step", Unit::kShare},
  Phrase{"median_step_ms", "median step time {}", Unit::kMs},
  Phrase{"explained_by", "explained by {}", Unit::kText},
  // throttled
  Phrase{"throttle_share", "throttled {} of its busy time", Unit::kShare, "the worst GPU"},
  Phrase{"cause", "throttled mostly by {}", Unit::kText, "the worst GPU"},
  Phrase{"thermal_share", "thermal slowdown {} of its busy time", Unit::kShare},
  Phrase{"power_cap_share", "at its power cap {} of its busy time", Unit::kShare},
  Phrase{"hw_slowdown_share", "hardware slowdown {} of its busy time", Unit::kShare},
  Phrase{"mean_sm_clock_mhz", "mean SM clock {}", Unit::kMhz},
  Phrase{"max_sm_clock_mhz", "max SM clock {}", Unit::kMhz},
  Phrase{"max_temp_c", "reached {}", Unit::kCelsius},
  Phrase{"power_limit_w", "power limit {}", Unit::kW},
  // host_memory_leak
  Phrase{"pss_growth_bytes", "host memory (PSS with workers) grew {}", Unit::kBytes},
  Phrase{"span_s", "over {}", Unit::kS},
  Phrase{"first_pss_bytes", "{} at first, with its workers", Unit::kBytes},
  Phrase{"last_pss_bytes", "{} at last, with its workers", Unit::kBytes},
  Phrase{"workers_pss_bytes", "its workers {} of it", Unit::kBytes},
  Phrase{"workers", "{} worker process(es)", Unit::kCount},
  Phrase{"headroom_bytes", "{} left on the host or in its cgroup", Unit::kBytes},
  Phrase{"limit", "runs out against {}", Unit::kText},
  // cpu_straggler
  Phrase{"cpu_ms_per_step", "{} of CPU time per step", Unit::kMs},
  Phrase{"others_cpu_ms_per_step", "the other ranks {} of CPU time per step", Unit::kMs},
  Phrase{"most_cpu_share", "the most CPU per step in {} of the windows", Unit::kShare},
  Phrase{"windows", "{} windows compared", Unit::kCount},
  Phrase{"cpu_cores", "{} CPU cores busy", Unit::kCount},
  // oom_guard
  Phrase{"guard_actions", "the guard acted {} time(s)", Unit::kCount},
  Phrase{"oom_splits", "{} split(s) after a CUDA OOM", Unit::kCount},
  Phrase{"predicted_splits", "{} split(s) before a predicted OOM", Unit::kCount},
  Phrase{"merges", "{} merge(s) when headroom returned", Unit::kCount},
  Phrase{"floors_reached", "at its floor {} time(s)", Unit::kCount},
  Phrase{"micro_batch_size", "micro-batch of {} at last", Unit::kCount},
  Phrase{"batch_size", "effective batch of {}", Unit::kCount},
  Phrase{"guard_requested_bytes", "the failed allocation asked for {}", Unit::kBytes},
  Phrase{"guard_headroom_bytes", "{} of GPU memory headroom", Unit::kBytes},
  Phrase{"guard_peak_allocated_bytes", "{} allocated at the peak", Unit::kBytes},
  Phrase{"guard_total_bytes", "the GPU has {}", Unit::kBytes},
  Phrase{"guard_num_alloc_retries", "{} allocation retries", Unit::kCount},
  // loader_tuned, loader_limited (and data_loader_stall with the adaptive loader on)
  Phrase{"loader_actions", "the adaptive loader acted {} time(s)", Unit::kCount},
  Phrase{"num_workers", "{} DataLoader workers at last", Unit::kCount},
  Phrase{"previous_num_workers", "{} DataLoader workers at first", Unit::kCount},
  Phrase{"prefetch_factor", "a prefetch factor of {} at last", Unit::kCount},
  Phrase{"prefetch_depth", "prefetch stage {} batches deep", Unit::kCount},
  Phrase{"data_wait_share_before", "waiting on data {} of the step time before", Unit::kShare},
  Phrase{"data_wait_share_after", "waiting on data {} of the step time after", Unit::kShare},
  Phrase{"loader_data_wait_share", "the loader measured a data wait of {} of the epoch", Unit::kShare},
  Phrase{"loader_steps_per_s", "{} steps a second", Unit::kCount},
  Phrase{"loader_cpu_budget_cores", "a CPU budget of {} cores", Unit::kCount},
  Phrase{"loader_ram_budget_bytes", "a RAM budget of {}", Unit::kBytes},
  Phrase{"loader_worker_pss_bytes", "{} per worker (PSS)", Unit::kBytes},
};

// Machine tokens the rules give as words.
constexpr std::array<std::pair<std::string_view, std::string_view>, 17> kTokens{{
  {"data_wait", "waiting for data"},
  {"step_body", "inside the step"},
  {"between_steps", "between the timed steps"},
  {"thermal", "temperature (thermal slowdown)"},
  {"power_cap", "the power cap"},
  {"hw_slowdown", "hardware slowdown"},
  {"gpu_step_s", "GPU step time"},
  {"cpu_step_s", "CPU step time"},
  {"data_wait_s", "data wait"},
  {"sm_active", "GPM SM activity"},
  {"gpu_util", "NVML utilization"},
  {"nvml_memory_used", "NVML memory used"},
  {"allocated_per_step", "the allocator's memory per step"},
  {"straggler", "a straggler rank"},
  {"mem_available", "the host's MemAvailable"},
  {"cgroup_limit", "the memory cgroup's limit"},
  {"rss", "RSS (smaps_rollup unreadable)"},
}};

// Any other key: its unit from its suffix.
constexpr std::array<std::pair<std::string_view, Unit>, 8> kSuffixes{{
  {"_share", Unit::kShare}, {"_pct", Unit::kPct}, {"_bytes", Unit::kBytes}, {"_ms", Unit::kMs},
  {"_s", Unit::kS}, {"_mhz", Unit::kMhz}, {"_w", Unit::kW}, {"_c", Unit::kCelsius},
}};
// clang-format on

std::string fixed(double v, int decimals) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  if (r.ec != std::errc()) return "?";
  std::string s(buf, r.ptr);
  if (s.starts_with("-") && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

std::string count(double v) {
  return fixed(v, v == std::floor(v) ? 0 : 1);
}

std::string value_text(const EvidenceValue& value, Unit unit) {
  if (const auto* s = std::get_if<std::string>(&value)) {
    for (const auto& [token, words] : kTokens)
      if (*s == token) return std::string(words);
    return *s;
  }
  const double v = std::get<double>(value);
  if (!std::isfinite(v)) return "n/a";
  constexpr double kMiB = 1024.0 * 1024.0, kGiB = 1024.0 * kMiB;
  switch (unit) {
    case Unit::kCount: return count(v);
    case Unit::kShare: return fixed(100 * v, std::fabs(v) < 0.1 ? 1 : 0) + " %";
    case Unit::kPct: return fixed(v, 1) + " %";
    case Unit::kPoints: return fixed(v, 1) + " percentage points";
    case Unit::kBytes:
      return std::fabs(v) >= kGiB ? fixed(v / kGiB, 2) + " GiB" : fixed(v / kMiB, 0) + " MiB";
    case Unit::kMs: return fixed(v, 1) + " ms";
    case Unit::kS:
      return std::fabs(v) < 1 && v != 0 ? fixed(v * 1000, 1) + " ms" : fixed(v, 1) + " s";
    case Unit::kMin: return fixed(v, 1) + " min";
    case Unit::kMhz: return fixed(v, 0) + " MHz";
    case Unit::kW: return fixed(v, 0) + " W";
    case Unit::kCelsius: return fixed(v, 0) + " \u00b0C";
    case Unit::kRatio: return "x" + fixed(v, 2);
    case Unit::kYesNo: return v != 0 ? "yes" : "no";
    case Unit::kText: return count(v);
  }
  return count(v);
}

// "gpu5_" or "pid123_" at the start of `key`: its subject ("GPU 5", "process 123") and the rest.
std::pair<std::string, std::string_view> subject_of(std::string_view key) {
  for (const auto& [prefix, name] :
       {std::pair<std::string_view, std::string_view>{"gpu", "GPU "}, {"pid", "process "}}) {
    if (!key.starts_with(prefix)) continue;
    const auto digits = key.substr(prefix.size());
    const auto end = digits.find_first_not_of("0123456789");
    if (end == 0 || end == std::string_view::npos || digits[end] != '_') continue;
    return {std::string(name) + std::string(digits.substr(0, end)), digits.substr(end + 1)};
  }
  return {"", key};
}

std::string fill(std::string_view text, const std::string& value) {
  const auto at = text.find("{}");
  return std::string(text.substr(0, at)) + value + std::string(text.substr(at + 2));
}

const Phrase* phrase_of(std::string_view rest) {
  for (const auto& p : kPhrases)
    if (p.key == rest) return &p;
  return nullptr;
}

}  // namespace

bool evidence_key_has_words(std::string_view key) {
  return key.starts_with("xid_") || phrase_of(subject_of(key).second) != nullptr;
}

std::string evidence_words(std::string_view key, const EvidenceValue& v) {
  if (key.starts_with("xid_"))
    return "XID " + std::string(key.substr(4)) + ": " + value_text(v, Unit::kCount) + " time(s)";
  const auto [subject, rest] = subject_of(key);
  std::string phrase;
  std::string_view alone;
  bool value_first = false;
  if (const Phrase* p = phrase_of(rest)) {
    phrase = fill(p->text, value_text(v, p->unit));
    alone = p->alone;
    value_first = p->text.starts_with("{}");
  } else {  // a key without its own wording: its words, the unit from its suffix
    std::string_view words = rest;
    Unit unit = std::holds_alternative<std::string>(v) ? Unit::kText : Unit::kCount;
    for (const auto& [suffix, u] : kSuffixes) {
      if (rest.size() > suffix.size() && rest.ends_with(suffix)) {
        words = rest.substr(0, rest.size() - suffix.size());
        unit = u;
        break;
      }
    }
    phrase = std::string(words);
    for (char& c : phrase) c = c == '_' ? ' ' : c;
    phrase += ": " + value_text(v, unit);
  }
  const std::string who = subject.empty() ? std::string(alone) : subject;
  if (who.empty()) return phrase;
  // "GPU 3: 2 corrected ECC error(s)", "GPU 5 throttled 29 % of its busy time".
  return who + (value_first ? ": " : " ") + phrase;
}

}  // namespace gpumon::diagnose
