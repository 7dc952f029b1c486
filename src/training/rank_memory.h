// SPDX-License-Identifier: MIT
// The attached training processes' latest allocator memory, as the node publishes it beside its
// agent socket (node/rank_memory_file.h) for `gpumon` and `gpumon watch` to show per GPU
// (PyTorch's allocated and reserved memory beside the GPU's readings). The one format both sides
// use: one JSON document,
//   {"version": 1, "written_ms": T, "ranks": [{"pid", "rank", "device", "gpu", "step",
//    "time_ms", "allocated_bytes", "reserved_bytes", "hello": {the process's latest hello}}, ...],
//    "gpus": [{"index", "util_pct", "temperature_c"}, ...]}
// "gpu" is the NVML index the node placed the rank on (rank_device.h), "gpus" the node's latest
// reading of each GPU: what a training process's own table (Python's mon.log_table()) shows
// beside its allocator, without calling NVML itself.
// Unknown keys are ignored; a value missing or null is unknown, never 0.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "training/training_types.h"

namespace gpumon::training {

struct RankMemory {
  std::int64_t pid = 0;
  std::optional<std::int64_t> rank;
  std::optional<std::string> device;  ///< the latest step's, as torch names it ("cuda:0")
  std::optional<Hello> hello;         ///< its latest (device fields included), for the GPU map
  std::optional<unsigned> gpu;        ///< NVML index the node placed it on; nullopt: unplaced
  std::int64_t step = 0;              ///< the latest step's number
  std::int64_t time_ms = 0;           ///< when the node received it (its wall clock)
  std::optional<std::int64_t> allocated_bytes, reserved_bytes;
  std::optional<double> step_s;       ///< the latest step's wall time (seconds)
  std::optional<double> data_wait_s;  ///< of which it waited for the data loader
};

/// A GPU's latest reading, as the node's sampler had it.
struct GpuNow {
  unsigned index = 0;  ///< NVML's
  std::optional<unsigned> util_pct, temperature_c;
};

struct RankMemoryTable {
  std::int64_t written_ms = 0;  ///< when the node wrote it (its wall clock)
  std::vector<RankMemory> ranks;
  std::vector<GpuNow> gpus;
};

std::string rank_memory_json(const RankMemoryTable& table);

/// The table, or why `text` is not one (one line).
std::optional<RankMemoryTable> parse_rank_memory(std::string_view text, std::string& error);

}  // namespace gpumon::training
