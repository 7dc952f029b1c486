// SPDX-License-Identifier: MIT
// The host's CPU use (between two reads) and memory use, for the live view's title: a slow
// DataLoader often shows as a host at 100 % CPU or out of memory while the GPUs idle.
//
// Thread-safety: none; one thread reads (it keeps the previous CPU times).
#pragma once

#include <cstdint>
#include <optional>

#include "gpu/reading.h"
#include "host/proc_files.h"
#include "host/proc_parse.h"

namespace gpumon::host {

struct HostUsage {
  Reading<double> cpu_pct;  ///< busy share of all CPUs since the previous read, 0-100
  unsigned cpus = 0;
  Reading<std::uint64_t> mem_used_bytes;  ///< MemTotal - MemAvailable
  Reading<std::uint64_t> mem_total_bytes;
};

class HostUsageReader {
 public:
  explicit HostUsageReader(const ProcFiles& files) : files_(files) {}
  /// The first read has no CPU share yet (kNotAvailable): it needs two.
  HostUsage read();

 private:
  const ProcFiles& files_;
  std::optional<CpuTimes> previous_;
};

}  // namespace gpumon::host
