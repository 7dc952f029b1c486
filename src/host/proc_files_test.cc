// SPDX-License-Identifier: MIT
#include "host/proc_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <thread>

#include "host/proc_parse.h"
#include "host/process_inspector.h"

namespace gpumon::host {
namespace {

const std::string kFakeRoot = std::string(GPUMON_TESTDATA_DIR) + "/proc";

TEST(DiskProcFiles, ReadsAFileWhole) {
  const DiskProcFiles files(kFakeRoot);
  const FileText t = files.read("uptime", 4096);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t.text, "1100.00 2000.00\n");
}

TEST(DiskProcFiles, StopsAtTheBound) {
  const DiskProcFiles files(kFakeRoot + "///");  // trailing slashes are dropped
  const FileText t = files.read("uptime", 4);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t.text, "1100");
}

TEST(DiskProcFiles, ReportsErrno) {
  const DiskProcFiles files(kFakeRoot);
  EXPECT_EQ(files.read("1/stat", 100).error, ENOENT);
  EXPECT_EQ(files.probe("1"), ENOENT);
  EXPECT_EQ(files.probe("4242"), 0);
  EXPECT_EQ(files.probe("uptime"), ENOTDIR);
  EXPECT_EQ(files.read_links("1/fd", 10).error, ENOENT);
}

TEST(DiskProcFiles, ReadsLinkTargetsAndSkipsDotFiles) {
  const DiskProcFiles files(kFakeRoot);
  LinkTargets links = files.read_links("4242/fd", 100);
  ASSERT_TRUE(links.ok());
  EXPECT_FALSE(links.truncated);
  std::sort(links.targets.begin(), links.targets.end());
  EXPECT_EQ(links.targets, (std::vector<std::string>{"/dev/null", "/dev/nvidia0", "/dev/nvidiactl",
                                                     "socket:[12345]"}));
  EXPECT_TRUE(files.read_links("4244/fd", 100).targets.empty());  // only .keep inside
}

TEST(DiskProcFiles, ReadLinksHonoursTheBound) {
  const DiskProcFiles files(kFakeRoot);
  const LinkTargets links = files.read_links("4242/fd", 2);
  EXPECT_TRUE(links.truncated);
  EXPECT_EQ(links.targets.size(), 2U);
}

TEST(DiskProcFiles, RealProcSelfParses) {
  // The real /proc of the test process: the parsers must accept what this kernel writes.
  const DiskProcFiles files;
  const std::string self = std::to_string(::getpid());
  const FileText stat = files.read(self + "/stat", 4096);
  ASSERT_TRUE(stat.ok());
  const auto st = parse_stat(stat.text);
  ASSERT_TRUE(st.has_value());
  EXPECT_GT(st->rss_pages, 0U);
  EXPECT_TRUE(parse_status(files.read(self + "/status", 16384).text).effective_uid.has_value());
  EXPECT_TRUE(parse_uptime_seconds(files.read("uptime", 256).text).has_value());
  EXPECT_TRUE(parse_boot_time(files.read("stat", 1U << 20).text).has_value());
}

TEST(DiskProcFiles, RealProcessInspectsAsVisible) {
  const DiskProcFiles files;
  UserNames users;
  InspectorOptions options;
  options.check_gpu_files = false;  // the test process has no GPU open
  ProcessInspector inspector(files, users, options);
  // CPU % since start needs the process to be older than one clock tick (10 ms).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto all =
      inspector.inspect({static_cast<unsigned>(::getpid())}, std::chrono::steady_clock::now());
  ASSERT_EQ(all.size(), 1U);
  EXPECT_EQ(all[0].visibility, Visibility::kVisible);
  EXPECT_TRUE(all[0].command_line.has_value());
  EXPECT_NE(all[0].command_line.value().find("gpumon_host_test"), std::string::npos);
  EXPECT_TRUE(all[0].user.has_value());
  EXPECT_TRUE(all[0].cpu_percent.has_value());
  EXPECT_TRUE(all[0].start_time.has_value());
}

}  // namespace
}  // namespace gpumon::host
