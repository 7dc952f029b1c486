// SPDX-License-Identifier: MIT
#include "cli/process_table.h"

#include <gtest/gtest.h>

#include "cli/test_snapshots.h"

namespace gpumon::cli {
namespace {

using namespace gpumon::cli::testing;

std::vector<std::string> plain(const std::vector<StyledLine>& lines) {
  std::vector<std::string> out;
  for (const StyledLine& l : lines) out.push_back(l.plain());
  return out;
}

TEST(ProcessTable, BoundsTheRowsAndCountsTheRest) {
  Snapshot s = empty_snapshot();
  s.gpus = {healthy_gpu(0)};
  for (unsigned pid = 100; pid < 105; ++pid) s.processes.push_back(visible_process(0, pid));
  const auto lines = plain(process_table(s, 2));
  ASSERT_EQ(lines.size(), 5U);  // title, heading, 2 rows, "... 3 more"
  EXPECT_EQ(lines[2].substr(0, 13), "  0       100");
  EXPECT_EQ(lines[3].substr(0, 13), "  0       101");
  EXPECT_EQ(lines[4], "... 3 more");
  EXPECT_EQ(process_table(s, 0).size(), 7U);  // 0: every row
  EXPECT_EQ(process_table(s, 5).size(), 7U);
}

TEST(ProcessTable, LongUserNamesAreCutAndColumnsStayAligned) {
  Snapshot s = empty_snapshot();
  s.processes = {visible_process(0, 1), visible_process(1, 2)};
  s.processes[0].host.user = std::string("a-very-long-user-name");
  const auto lines = plain(process_table(s));
  EXPECT_EQ(lines[1], "GPU       PID  User           GPU mem     CPU %       RSS  Command");
  EXPECT_EQ(lines[2].substr(0, 38), "  0         1  a-very-long-  70.0 GiB ");
  EXPECT_EQ(lines[3].substr(0, 38), "  1         2  alice         70.0 GiB ");
}

TEST(ProcessTable, MissingValuesPerField) {
  Snapshot s = empty_snapshot();
  ProcessRow p = visible_process(0);
  p.gpu.used_memory_bytes = Reading<std::uint64_t>::missing(Missing::kNotAvailable);  // MIG
  p.host.user = Reading<std::string>::missing(Missing::kNoPermission);
  p.host.cpu_percent = Reading<double>::missing(Missing::kNotAvailable);
  p.host.command_line = Reading<std::string>::missing(Missing::kNoPermission);
  s.processes = {p};
  const auto lines = plain(process_table(s));
  // NVML's name stands in for a command line that /proc refused.
  EXPECT_EQ(lines[2], "  0      4242  denied       N/A       N/A  12.3 GiB  python");
  p.gpu.name = Reading<std::string>::missing(Missing::kNotAvailable);
  s.processes = {p};
  EXPECT_EQ(plain(process_table(s))[2],
            "  0      4242  denied       N/A       N/A  12.3 GiB  denied");
}

TEST(ProcessTable, TheJobPrefixesTheCommand) {
  Snapshot s = empty_snapshot();
  ProcessRow p = visible_process(0);
  p.host.job.id = "4711";
  p.host.job.slurm_job_id = "4711";
  s.processes = {p};
  const auto lines = plain(process_table(s));
  EXPECT_NE(lines[2].find("  [job 4711] "), std::string::npos) << lines[2];
  p.host.job = {};
  s.processes = {p};
  EXPECT_EQ(plain(process_table(s))[2].find('['), std::string::npos);
}

TEST(ProcessTable, ListErrorsPerGpuButNotForLostGpus) {
  Snapshot s = empty_snapshot();
  s.gpus = {gpu_with_missing_fields(0), lost_gpu(1)};
  const auto lines = plain(process_table(s));
  ASSERT_EQ(lines.size(), 4U);
  EXPECT_EQ(lines[2], "No running GPU processes.");
  EXPECT_EQ(lines[3], "GPU 0: process list not supported");
}

TEST(ProcessTable, OtherProcessIsShownAsNotVisible) {
  Snapshot s = empty_snapshot();
  ProcessRow p = invisible_process(0);
  p.host.visibility = host::Visibility::kOtherProcess;
  s.processes = {p};
  const auto lines = plain(process_table(s));
  EXPECT_NE(lines[2].find("[not visible] python3"), std::string::npos);
  EXPECT_EQ(lines.back().rfind("[not visible]: ", 0), 0U);
}

}  // namespace
}  // namespace gpumon::cli
