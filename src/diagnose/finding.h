// SPDX-License-Identifier: MIT
// Finding: one thing the diagnosis found wrong (or worth knowing) about a run, with the numbers
// that show it, the time, GPUs and ranks concerned, and what to try. docs/DIAGNOSES.md lists
// the ids and how each is detected.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace gpumon::diagnose {

enum class Severity : std::uint8_t { kInfo = 0, kWarning = 1, kCritical = 2 };
std::string_view severity_name(Severity s);
/// "info", "warning", "critical"; nullopt for anything else.
std::optional<Severity> parse_severity(std::string_view s);

/// Evidence values: numbers in the unit their name says, or words.
using EvidenceValue = std::variant<double, std::string>;

struct Finding {
  std::string id;  ///< fixed id, e.g. "data_loader_stall"
  Severity severity = Severity::kWarning;
  double confidence = 0;                                        ///< 0-1 (confidence.h says how)
  std::string title;                                            ///< a few words
  std::string summary;                                          ///< one line with the key numbers
  std::vector<std::pair<std::string, EvidenceValue>> evidence;  ///< in the order to show
  std::optional<std::int64_t> start_ms, end_ms;  ///< when it was seen (ms since the epoch)
  std::vector<unsigned> gpus;                    ///< NVML indices
  /// Training ranks. Rules put a process without a rank (no RANK) here by its pid; diagnose()
  /// then moves it to `pids`, so `ranks` holds only real ranks in its result.
  std::vector<std::int64_t> ranks;
  std::vector<std::int64_t> pids;  ///< training processes without a known rank, by pid
  /// The nodes concerned, by name: set by a job's diagnosis across nodes (diagnose/job), whose
  /// findings name GPUs in their text as node and index; empty in a one-node diagnosis.
  std::vector<std::string> nodes;
  std::string advice;
  int deduction = 0;  ///< health points taken off (set by diagnose())
  /// About the machine, not the run: only GPUs no rank of the run uses (set by diagnose());
  /// reported apart, no points taken off.
  bool machine = false;

  void add(std::string name, double v) { evidence.emplace_back(std::move(name), v); }
  void add(std::string name, std::string v) {
    evidence.emplace_back(std::move(name), std::move(v));
  }
};

}  // namespace gpumon::diagnose
