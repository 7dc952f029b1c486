// SPDX-License-Identifier: MIT
#include "host/host_usage.h"

#include "host/host_memory_parse.h"

namespace gpumon::host {

HostUsage HostUsageReader::read() {
  HostUsage u;
  u.cpu_pct = Reading<double>::missing(Missing::kNotAvailable);
  const FileText stat = files_.read("stat", 1U << 20);  // its intr line can be long
  const std::optional<CpuTimes> now = stat.ok() ? parse_cpu_times(stat.text) : std::nullopt;
  if (now) {
    u.cpus = now->cpus;
    if (previous_ && now->total > previous_->total && now->busy >= previous_->busy)
      u.cpu_pct = 100.0 * static_cast<double>(now->busy - previous_->busy) /
                  static_cast<double>(now->total - previous_->total);
    previous_ = now;
  } else {
    u.cpu_pct = Reading<double>::missing(Missing::kError);
  }
  const FileText meminfo = files_.read("meminfo", 64U << 10);
  const auto total = meminfo.ok() ? parse_kb_field(meminfo.text, "MemTotal") : std::nullopt;
  const auto available = meminfo.ok() ? parse_kb_field(meminfo.text, "MemAvailable") : std::nullopt;
  if (total && available && *total >= *available && *available >= 0) {
    u.mem_total_bytes = static_cast<std::uint64_t>(*total);
    u.mem_used_bytes = static_cast<std::uint64_t>(*total - *available);
  } else {
    u.mem_total_bytes = u.mem_used_bytes = Reading<std::uint64_t>::missing(Missing::kError);
  }
  return u;
}

}  // namespace gpumon::host
