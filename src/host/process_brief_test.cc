// SPDX-License-Identifier: MIT
#include "host/process_brief.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace gpumon::host {
namespace {

const DiskProcFiles kFiles(std::string(GPUMON_TESTDATA_DIR) + "/proc");

TEST(ProcessBrief, ParentStartAndCommandLine) {
  const auto b = read_process_brief(kFiles, 4242);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->pid, 4242U);
  EXPECT_EQ(b->ppid, 1U);
  EXPECT_EQ(b->start_ticks, 100000U);
  EXPECT_EQ(b->command, "python train.py --lr 0.1");
}

TEST(ProcessBrief, GoneOrCorruptIsNothing) {
  EXPECT_FALSE(read_process_brief(kFiles, 99999).has_value());
  EXPECT_FALSE(read_process_brief(kFiles, 4246).has_value());  // a stat cut short
}

TEST(ProcessBrief, TheLiveProcessItself) {
  const DiskProcFiles proc("/proc");
  const auto self = read_process_brief(proc, static_cast<unsigned>(::getpid()));
  ASSERT_TRUE(self.has_value());
  EXPECT_EQ(self->ppid, static_cast<unsigned>(::getppid()));
  EXPECT_NE(self->command.find("gpumon_host_test"), std::string::npos) << self->command;
}

}  // namespace
}  // namespace gpumon::host
