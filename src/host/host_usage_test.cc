// SPDX-License-Identifier: MIT
#include "host/host_usage.h"

#include <gtest/gtest.h>

#include "host/map_proc_files.h"

namespace gpumon::host {
namespace {

using Files = testing::MapFiles;

TEST(HostUsage, CpuShareBetweenReadsAndMemoryInUse) {
  Files f;
  f.files["stat"] = "cpu  100 0 100 800 0 0 0 0\ncpu0 1 1 1 1\ncpu1 1 1 1 1\n";
  f.files["meminfo"] = "MemTotal:  1000 kB\nMemFree: 100 kB\nMemAvailable:  250 kB\n";
  HostUsageReader reader(f);
  HostUsage first = reader.read();
  EXPECT_EQ(first.cpu_pct.why(), Missing::kNotAvailable) << "one read gives no share";
  EXPECT_EQ(first.cpus, 2U);
  EXPECT_EQ(first.mem_total_bytes.value(), 1000U * 1024);
  EXPECT_EQ(first.mem_used_bytes.value(), 750U * 1024);
  // 300 more busy ticks of 400: 75 %.
  f.files["stat"] = "cpu  300 0 200 900 0 0 0 0\ncpu0 1 1 1 1\ncpu1 1 1 1 1\n";
  EXPECT_DOUBLE_EQ(reader.read().cpu_pct.value(), 75.0);
}

TEST(HostUsage, UnreadableIsMissingNeverZero) {
  Files f;
  HostUsageReader reader(f);
  const HostUsage u = reader.read();
  EXPECT_FALSE(u.cpu_pct);
  EXPECT_FALSE(u.mem_used_bytes);
  f.files["stat"] = "cpu  100 0 100 800 0 0 0 0\n";
  reader.read();
  f.files["stat"] = "cpu  50 0 100 800 0 0 0 0\n";  // went backwards: not a share
  EXPECT_FALSE(reader.read().cpu_pct);
}

}  // namespace
}  // namespace gpumon::host
