// SPDX-License-Identifier: MIT
// ProcessStatsReader over an in-memory tree: a rank (pid 100) with two DataLoader workers
// (200, 201; 201 forked one of its own, 300), cgroup v1 and v2 files.
#include "host/process_stats.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <string>
#include <vector>

#include "host/map_proc_files.h"

namespace gpumon::host {
namespace {

using testing::MapFiles;

// utime, stime in ticks (100 per second), rss in pages (4096 bytes).
std::string stat_line(int pid, int utime, int stime, int rss_pages) {
  return std::to_string(pid) + " (python3) S 1 1 1 0 -1 0 0 0 0 0 " + std::to_string(utime) + " " +
         std::to_string(stime) + " 0 0 20 0 1 0 100 1000000 " + std::to_string(rss_pages) + " 0\n";
}

std::string rollup(int rss_kb, int pss_kb) {
  return "0-1 ---p 0 00:00 0 [rollup]\nRss: " + std::to_string(rss_kb) +
         " kB\nPss: " + std::to_string(pss_kb) + " kB\n";
}

MapFiles tree() {
  MapFiles f;
  f.files["100/stat"] = stat_line(100, 300, 100, 1000);  // 4 s
  f.files["100/smaps_rollup"] = rollup(8000, 6000);
  f.dirs["100/task"] = {"100", "101"};
  f.files["100/task/100/children"] = "200 ";
  f.files["100/task/101/children"] = "201 ";  // forked from another thread
  f.files["200/stat"] = stat_line(200, 150, 50, 500);
  f.files["200/smaps_rollup"] = rollup(4000, 1000);
  f.dirs["200/task"] = {"200"};
  f.files["200/task/200/children"] = "";
  f.files["201/stat"] = stat_line(201, 100, 0, 500);
  f.files["201/smaps_rollup"] = rollup(4000, 1500);
  f.dirs["201/task"] = {"201"};
  f.files["201/task/201/children"] = "300 100 ";  // 100 again: counted once
  f.files["300/stat"] = stat_line(300, 50, 0, 10);
  f.files["300/statm"] = "100 10 5 0 0 0 0\n";  // no smaps_rollup: RSS stands in
  f.dirs["300/task"] = {"300"};
  f.files["300/task/300/children"] = "";
  return f;
}

TEST(ProcessStats, SumsTheWorkersPss) {
  const MapFiles f = tree();
  const MapFiles none;
  const ProcessStatsReader reader(f, none);
  const auto t = reader.read_tree(100);
  ASSERT_TRUE(t.has_value());
  EXPECT_DOUBLE_EQ(*t->self.cpu_s, 4.0);
  EXPECT_EQ(*t->self.pss_bytes, 6000 * 1024);
  EXPECT_EQ(*t->self.rss_bytes, 8000 * 1024);
  EXPECT_FALSE(t->self.pss_is_rss);
  EXPECT_EQ(t->workers, 3);
  EXPECT_DOUBLE_EQ(*t->workers_cpu_s, 2.0 + 1.0 + 0.5);
  EXPECT_EQ(*t->workers_pss_bytes, (1000 + 1500) * 1024 + 10 * 4096);
  EXPECT_TRUE(t->workers_pss_is_rss);
}

TEST(ProcessStats, AnExitingWorkerIsNotAWorker) {
  MapFiles f = tree();
  f.files["100/task/100/children"] = "200 202 ";
  f.files["202/stat"] = stat_line(202, 40, 0, 0);  // a zombie: no resident pages
  f.files["202/smaps_rollup"] = "";
  f.files["202/statm"] = "0 0 0 0 0 0 0\n";
  f.dirs["202/task"] = {"202"};
  f.files["202/task/202/children"] = "";
  const MapFiles none;
  const auto t = ProcessStatsReader(f, none).read_tree(100);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->workers, 3) << "200, 201 and 300; not the exiting 202";
  EXPECT_EQ(*t->workers_pss_bytes, (1000 + 1500) * 1024 + 10 * 4096);
}

TEST(ProcessStats, WithoutSmapsRollupRssStandsInAndSaysSo) {
  MapFiles f = tree();
  f.files.erase("100/smaps_rollup");
  f.files["100/statm"] = "9000 2000 10 0 0 0 0\n";
  const MapFiles none;
  const auto u = ProcessStatsReader(f, none).read_process(100);
  EXPECT_TRUE(u.pss_is_rss);
  EXPECT_EQ(*u.pss_bytes, 2000 * 4096);
}

TEST(ProcessStats, UnlistableChildrenAreMissingNotZero) {
  MapFiles f = tree();
  f.files.erase("100/task/100/children");
  f.files.erase("100/task/101/children");
  const MapFiles none;
  const auto t = ProcessStatsReader(f, none).read_tree(100);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->workers, 0);
  EXPECT_FALSE(t->workers_pss_bytes.has_value());
  EXPECT_FALSE(t->workers_cpu_s.has_value());
}

TEST(ProcessStats, AGoneProcessIsNothing) {
  const MapFiles f, none;
  EXPECT_FALSE(ProcessStatsReader(f, none).read_tree(100).has_value());
}

TEST(HostMemory, MeminfoAndCgroupV1WalkingUpToTheMountedRoot) {
  MapFiles proc;
  proc.files["meminfo"] = "MemTotal: 1000 kB\nMemFree: 10 kB\nMemAvailable: 600 kB\n";
  // A container: /proc names the host's path, the cgroup fs shows the container's at its root.
  proc.files["100/cgroup"] = "9:name=systemd:/\n4:memory:/process_api/abc\n0::/\n";
  MapFiles cg;
  cg.files["memory/memory.limit_in_bytes"] = "2147483648\n";
  cg.files["memory/memory.usage_in_bytes"] = "1073741824\n";
  const HostMemory h = ProcessStatsReader(proc, cg).read_host(100);
  EXPECT_EQ(*h.mem_available_bytes, 600 * 1024);
  EXPECT_EQ(*h.mem_total_bytes, 1000 * 1024);
  EXPECT_EQ(*h.cgroup_limit_bytes, 2147483648);
  EXPECT_EQ(*h.cgroup_usage_bytes, 1073741824);
}

TEST(HostMemory, CgroupV1UnlimitedHasUsageButNoLimit) {
  MapFiles proc;
  proc.files["100/cgroup"] = "4:memory:/a\n";
  MapFiles cg;
  cg.files["memory/a/memory.limit_in_bytes"] = "9223372036854771712\n";
  cg.files["memory/a/memory.usage_in_bytes"] = "5000\n";
  cg.files["memory/memory.limit_in_bytes"] = "9223372036854771712\n";
  const HostMemory h = ProcessStatsReader(proc, cg).read_host(100);
  EXPECT_FALSE(h.cgroup_limit_bytes.has_value());
  EXPECT_EQ(*h.cgroup_usage_bytes, 5000);
  EXPECT_FALSE(h.mem_available_bytes.has_value());  // no meminfo: missing, not 0
}

TEST(HostMemory, CgroupV2TakesTheSmallestLimitOnThePath) {
  MapFiles proc;
  proc.files["100/cgroup"] = "0::/user.slice/job\n";
  MapFiles cg;
  cg.files["./user.slice/job/memory.max"] = "max\n";
  cg.files["./user.slice/job/memory.current"] = "777\n";
  cg.files["./user.slice/memory.max"] = "1048576\n";
  const HostMemory h = ProcessStatsReader(proc, cg).read_host(100);
  EXPECT_EQ(*h.cgroup_limit_bytes, 1048576);
  EXPECT_EQ(*h.cgroup_usage_bytes, 777);
}

TEST(ProcessStats, ThisProcessOnTheRealProc) {
  const DiskProcFiles proc, cgroup("/sys/fs/cgroup");
  const ProcessStatsReader reader(proc, cgroup, ProcessStatsReader::system_options());
  const auto t = reader.read_tree(::getpid());
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(t->self.cpu_s.has_value());
  EXPECT_GT(*t->self.pss_bytes, 0);
  EXPECT_GT(*reader.read_host(::getpid()).mem_total_bytes, 0);
}

}  // namespace
}  // namespace gpumon::host
