// SPDX-License-Identifier: MIT
// The command line of `gpumon query`: nvidia-smi's query options (rewritten by argv_rewrite.h,
// parsed with CLI11) checked into a QueryOptions. Nothing here touches a GPU.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "query/query_error.h"
#include "query/query_parse.h"

namespace gpumon::query {

struct QueryOptions {
  enum class Action {
    kQuery,          ///< sample and print
    kHelp,           ///< print help_text (-h/--help)
    kHelpGpuFields,  ///< --help-query-gpu
    kHelpAppFields,  ///< --help-query-compute-apps
    kListGpus,       ///< -L/--list-gpus: "GPU 0: NAME (UUID: ...)", as nvidia-smi -L
    kReport,         ///< -q/--query: nvidia-smi -q's report (q_report.h)
  };
  enum class Target { kGpus, kComputeApps };

  Action action = Action::kQuery;
  std::string help_text;  ///< for kHelp

  Target target = Target::kGpus;
  std::string fields;  ///< the raw --query-gpu or --query-compute-apps list
  OutputFormat format;
  std::optional<std::string> ids;                     ///< -i/--id list; nullopt: every GPU
  std::optional<std::chrono::milliseconds> interval;  ///< -l / -lms; nullopt: sample once
  std::optional<std::uint64_t> count;                 ///< -c/--count: stop after this many samples
  std::string output_file;                            ///< -f/--filename; empty: stdout
  unsigned display = 0;  ///< -d/--display with -q: QSection bits; 0 the whole report

  /// Samples to take: count, else 1 without a loop, else unbounded (nullopt).
  std::optional<std::uint64_t> samples() const {
    if (count) return count;
    if (!interval) return 1;
    return std::nullopt;
  }
};

/// Parses everything after the word `query`. The field list is only split-checked for
/// emptiness later, against its registry (resolve_fields), so that a help request never needs
/// a valid list.
Expected<QueryOptions> parse_query_options(const std::vector<std::string>& args);

}  // namespace gpumon::query
