// SPDX-License-Identifier: MIT
#include "host/cgroup_oom.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace gpumon::host {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(CgroupOom, ParsesTheOomKillCount) {
  EXPECT_EQ(parse_oom_kill("low 0\nhigh 0\nmax 3\noom 2\noom_kill 2\noom_group_kill 0\n"), 2U);
  EXPECT_EQ(parse_oom_kill("oom_kill_disable 0\nunder_oom 0\noom_kill 7\n"), 7U);
  EXPECT_EQ(parse_oom_kill("oom_kill_disable 0\nunder_oom 0\n"), std::nullopt);  // old kernel
  EXPECT_EQ(parse_oom_kill("oom_kill x\n"), std::nullopt);
}

TEST(CgroupOom, FindsTheFileOfEitherHierarchy) {
  const fs::path root = fs::temp_directory_path() / ("gpumon-cgroup-" + std::to_string(getpid()));
  write(root / "v2" / "proc", "0::/user.slice/job\n");
  write(root / "v2" / "sys/user.slice/job/memory.events", "oom 1\noom_kill 1\n");
  EXPECT_EQ(cgroup_oom_kills((root / "v2/proc").string(), (root / "v2/sys").string()), 1U);
  write(root / "v1" / "proc", "5:cpu:/\n4:memory:/docker/abc\n0::/\n");
  write(root / "v1" / "sys/memory/docker/abc/memory.oom_control", "under_oom 0\noom_kill 4\n");
  EXPECT_EQ(cgroup_oom_kills((root / "v1/proc").string(), (root / "v1/sys").string()), 4U);
  EXPECT_EQ(cgroup_oom_kills((root / "none").string(), root.string()), std::nullopt);
  fs::remove_all(root);
}

}  // namespace
}  // namespace gpumon::host
