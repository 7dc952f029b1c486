// SPDX-License-Identifier: MIT
// `gpumon query`: a drop-in for nvidia-smi's query mode (--query-gpu / --query-compute-apps with
// --format=csv[,noheader][,nounits]), plus --format=json and jsonl. See docs/query.md.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "gpu/gpu_backend.h"
#include "gpu/nvml_backend.h"
#include "query/query_error.h"

namespace gpumon::query {

class LoopClock;

/// Runs `gpumon query ARGS...`; `args` is everything after the word "query". Writes the result
/// to `out` (or the -f file) and diagnostics to `err`; returns the exit status: 0 success (also
/// after Ctrl-C and when the reader of a pipe goes away), 2 bad usage or no usable NVML,
/// 6 no GPU matches -i, 1 the output could not be written. Never throws.
/// Installs SIGINT/SIGTERM/SIGPIPE handlers for its duration and restores them after.
int run_query_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

namespace detail {

/// The seams of run_query_command, for tests.
struct QueryEnvironment {
  /// Opens the backend; on failure returns nullptr and sets `*error`: one line for the user and
  /// nvidia-smi's exit code for that failure.
  std::function<std::unique_ptr<GpuBackend>(QueryError* error)> open_backend;
  /// nullptr: the steady clock, with SIGINT/SIGTERM/SIGPIPE handled for the run.
  LoopClock* clock = nullptr;
};

/// What a failure to open NVML prints and exits with, as nvidia-smi does (9: no driver).
QueryError open_failure(const NvmlOpenError& e);

/// QueryEnvironment over NVML (GPUMON_NVML_LIBRARY or the driver's libnvidia-ml.so.1).
QueryEnvironment nvml_environment();

int run_query_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                      const QueryEnvironment& env);

}  // namespace detail
}  // namespace gpumon::query
