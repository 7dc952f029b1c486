// SPDX-License-Identifier: MIT
// ProcessInspector over the fake tree in testdata/proc/ (see the comments in the tree's
// generator, testdata/proc/README.md). Permission errors cannot be produced with real files
// when tests run as root, so ScriptedProcFiles injects them through the ProcFiles seam.
#include "host/process_inspector.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <map>
#include <string>

namespace gpumon::host {
namespace {

using std::chrono::seconds;
using std::chrono::steady_clock;

// The fake tree, with per-path errors and replaced contents on top.
class ScriptedProcFiles final : public ProcFiles {
 public:
  explicit ScriptedProcFiles(std::string root) : disk_(std::move(root)) {}

  FileText read(std::string_view relative, std::size_t max_bytes) const override {
    const std::string key(relative);
    ++reads_[key];
    if (auto it = errors_.find(key); it != errors_.end()) return FileText{"", it->second};
    if (auto it = texts_.find(key); it != texts_.end()) return FileText{it->second, 0};
    return disk_.read(relative, max_bytes);
  }
  LinkTargets read_links(std::string_view relative, std::size_t max_entries) const override {
    const std::string key(relative);
    ++reads_[key];
    if (auto it = errors_.find(key); it != errors_.end()) return LinkTargets{{}, false, it->second};
    return disk_.read_links(relative, max_entries);
  }
  int probe(std::string_view relative) const override {
    if (auto it = errors_.find(std::string(relative)); it != errors_.end()) return it->second;
    return disk_.probe(relative);
  }

  void fail(const std::string& path, int error) { errors_[path] = error; }
  void replace(const std::string& path, std::string text) { texts_[path] = std::move(text); }
  int reads(const std::string& path) const { return reads_[path]; }

 private:
  DiskProcFiles disk_;
  std::map<std::string, int> errors_;
  std::map<std::string, std::string> texts_;
  mutable std::map<std::string, int> reads_;
};

class ProcessInspectorTest : public ::testing::Test {
 protected:
  ProcessInspectorTest()
      : files_(std::string(GPUMON_TESTDATA_DIR) + "/proc"),
        users_([](unsigned uid) -> std::optional<std::string> {
          if (uid == 1000) return "alice";
          if (uid == 0) return "root";
          return std::nullopt;
        }) {}

  ProcessInspector make() {
    InspectorOptions options;
    options.clock_ticks_per_second = 100;
    options.page_size_bytes = 4096;
    return ProcessInspector(files_, users_, options);
  }

  HostProcessInfo one(ProcessInspector& inspector, unsigned pid,
                      steady_clock::time_point now = steady_clock::time_point(seconds(100))) {
    auto all = inspector.inspect({pid}, now);
    return all.at(0);
  }

  ScriptedProcFiles files_;
  UserNames users_;
};

TEST_F(ProcessInspectorTest, HealthyProcess) {
  auto inspector = make();
  const HostProcessInfo p = one(inspector, 4242);
  EXPECT_EQ(p.pid, 4242U);
  EXPECT_EQ(p.visibility, Visibility::kVisible);
  EXPECT_EQ(p.user.value(), "alice");
  EXPECT_EQ(p.uid.value(), 1000U);
  EXPECT_EQ(p.comm.value(), "python3");
  EXPECT_EQ(p.command_line.value(), "python train.py --lr 0.1");
  EXPECT_EQ(p.rss_bytes.value(), 262144ULL * 4096);
  // 2000 ticks of CPU over 100 s of life (started at 1000 s, uptime 1100 s): 20 %.
  EXPECT_NEAR(p.cpu_percent.value(), 20.0, 1e-9);
  EXPECT_EQ(p.cpu_window, CpuWindow::kSinceStart);
  // btime 1700000000 + 1000 s.
  EXPECT_EQ(std::chrono::system_clock::to_time_t(p.start_time.value()), 1700001000);
}

TEST_F(ProcessInspectorTest, JobFromCgroupAndEnvironmentReadOncePerProcess) {
  auto inspector = make();
  const auto t0 = steady_clock::time_point(seconds(100));
  const HostProcessInfo p = one(inspector, 4242, t0);
  EXPECT_EQ(p.job.slurm_job_id, "4711");
  EXPECT_EQ(p.job.slurm_step_id, "0");
  EXPECT_EQ(p.job.id, "4711.0");
  EXPECT_EQ(p.job.id_source, "slurm");
  one(inspector, 4242, t0 + seconds(1));
  EXPECT_EQ(files_.reads("4242/environ"), 1);
  EXPECT_EQ(files_.reads("4242/cgroup"), 1);
  // Another user's process: environ is refused, the cgroup still names the Slurm job.
  auto other = make();
  files_.fail("4242/environ", EACCES);
  const HostProcessInfo q = one(other, 4242, t0);
  EXPECT_EQ(q.job.slurm_job_id, "4711");
  EXPECT_EQ(q.job.slurm_step_id, "0");
  // A zombie has neither file: no job.
  EXPECT_TRUE(one(other, 4244, t0).job.empty());
}

TEST_F(ProcessInspectorTest, CpuOverAnIntervalOnTheSecondReading) {
  auto inspector = make();
  const auto t0 = steady_clock::time_point(seconds(100));
  one(inspector, 4242, t0);
  // 300 more ticks (3 s of CPU) in 2 s of wall time: 150 % of one CPU.
  files_.replace("4242/stat",
                 "4242 (python3) R 1 4242 4242 0 -1 4194304 1000 0 0 0 1700 600 0 0 20 0 12 0 "
                 "100000 9000000000 262144 0\n");
  const HostProcessInfo p = one(inspector, 4242, t0 + seconds(2));
  EXPECT_EQ(p.cpu_window, CpuWindow::kInterval);
  EXPECT_NEAR(p.cpu_percent.value(), 150.0, 1e-9);
}

TEST_F(ProcessInspectorTest, ReusedPidStartsOverSinceStart) {
  auto inspector = make();
  const auto t0 = steady_clock::time_point(seconds(100));
  one(inspector, 4242, t0);
  // Same PID, another start time: a new process, so no interval against the old one.
  files_.replace("4242/stat",
                 "4242 (python3) R 1 4242 4242 0 -1 4194304 1000 0 0 0 100 0 0 0 20 0 12 0 "
                 "90000 9000000000 262144 0\n");
  const HostProcessInfo p = one(inspector, 4242, t0 + seconds(2));
  EXPECT_EQ(p.cpu_window, CpuWindow::kSinceStart);
  EXPECT_NEAR(p.cpu_percent.value(), 100.0 / 100 / 200 * 100, 1e-9);  // 1 s of CPU in 200 s
}

TEST_F(ProcessInspectorTest, NameWithParenthesesHostileCommandLineAndUnknownUid) {
  auto inspector = make();
  const HostProcessInfo p = one(inspector, 4243);
  EXPECT_EQ(p.visibility, Visibility::kVisible);
  EXPECT_EQ(p.comm.value(), "a) b (c)");
  EXPECT_EQ(p.user.value(), "4000000");
  // ESC, the 0xFF byte and the tab are neutralised; arguments are joined by spaces.
  EXPECT_EQ(p.command_line.value(),
            "evil \xEF\xBF\xBD[31mred bad\xEF\xBF\xBD"
            "byte tab here");
}

TEST_F(ProcessInspectorTest, ZombieShowsItsNameAndNoMemory) {
  auto inspector = make();
  const HostProcessInfo p = one(inspector, 4244);
  ASSERT_EQ(p.visibility, Visibility::kVisible);  // no open files: the fd check cannot decide
  EXPECT_EQ(p.command_line.value(), "[defunct-worker]");
  EXPECT_FALSE(p.rss_bytes.has_value());
  EXPECT_EQ(p.rss_bytes.why(), Missing::kNotAvailable);
  EXPECT_EQ(p.user.value(), "root");
}

TEST_F(ProcessInspectorTest, ProcessWithoutGpuFilesIsAnotherProcess) {
  auto inspector = make();
  const HostProcessInfo p = one(inspector, 4245);
  EXPECT_EQ(p.visibility, Visibility::kOtherProcess);
  EXPECT_EQ(p.user.why(), Missing::kNotAvailable);
  EXPECT_EQ(p.command_line.why(), Missing::kNotAvailable);
  EXPECT_FALSE(p.cpu_percent.has_value());
  // The verdict is kept while the process lives: fd is listed once.
  one(inspector, 4245);
  EXPECT_EQ(files_.reads("4245/fd"), 1);
}

TEST_F(ProcessInspectorTest, GpuFileCheckCanBeTurnedOff) {
  InspectorOptions options;
  options.check_gpu_files = false;
  ProcessInspector inspector(files_, users_, options);
  EXPECT_EQ(one(inspector, 4245).visibility, Visibility::kVisible);
  EXPECT_EQ(files_.reads("4245/fd"), 0);
}

TEST_F(ProcessInspectorTest, UnreadableFdDirectoryIsTrusted) {
  // Another user's process: /proc/PID/fd is owner-only, so gpumon cannot tell and shows it.
  files_.fail("4245/fd", EACCES);
  auto inspector = make();
  EXPECT_EQ(one(inspector, 4245).visibility, Visibility::kVisible);
}

TEST_F(ProcessInspectorTest, MissingPidIsNotVisible) {
  auto inspector = make();
  const HostProcessInfo p = one(inspector, 999999);
  EXPECT_EQ(p.visibility, Visibility::kNotVisible);
  EXPECT_EQ(p.user.why(), Missing::kNotAvailable);
  EXPECT_EQ(p.command_line.why(), Missing::kNotAvailable);
  EXPECT_EQ(p.cpu_percent.why(), Missing::kNotAvailable);
  EXPECT_EQ(p.rss_bytes.why(), Missing::kNotAvailable);
  EXPECT_EQ(p.start_time.why(), Missing::kNotAvailable);
}

TEST_F(ProcessInspectorTest, ProcessExitingBetweenReads) {
  files_.fail("4242/stat", ESRCH);
  auto inspector = make();
  EXPECT_EQ(one(inspector, 4242).visibility, Visibility::kNotVisible);
}

TEST_F(ProcessInspectorTest, CommandLineVanishingAfterStat) {
  files_.fail("4242/cmdline", ENOENT);
  auto inspector = make();
  const HostProcessInfo p = one(inspector, 4242);
  EXPECT_EQ(p.visibility, Visibility::kVisible);
  EXPECT_EQ(p.command_line.why(), Missing::kNotAvailable);
  EXPECT_EQ(p.comm.value(), "python3");
}

TEST_F(ProcessInspectorTest, HidepidOneDeniesTheFiles) {
  files_.fail("4242/stat", EACCES);
  auto inspector = make();
  const HostProcessInfo p = one(inspector, 4242);
  EXPECT_EQ(p.visibility, Visibility::kHidden);
  EXPECT_EQ(p.user.why(), Missing::kNoPermission);
  EXPECT_EQ(p.command_line.why(), Missing::kNoPermission);
  EXPECT_EQ(p.cpu_percent.why(), Missing::kNoPermission);
}

TEST_F(ProcessInspectorTest, SingleDeniedFileOnlyAffectsItsFields) {
  files_.fail("4242/cmdline", EACCES);
  files_.fail("4242/status", EPERM);
  auto inspector = make();
  const HostProcessInfo p = one(inspector, 4242);
  EXPECT_EQ(p.visibility, Visibility::kVisible);
  EXPECT_EQ(p.command_line.why(), Missing::kNoPermission);
  EXPECT_EQ(p.user.why(), Missing::kNoPermission);
  EXPECT_TRUE(p.cpu_percent.has_value());
  EXPECT_TRUE(p.rss_bytes.has_value());
}

TEST_F(ProcessInspectorTest, HidepidTwoMakesMissingPidsHidden) {
  files_.replace("self/mountinfo", "22 1 0:21 / /proc rw - proc proc rw,hidepid=2\n");
  auto inspector = make();
  EXPECT_TRUE(inspector.hides_other_users());
  const HostProcessInfo p = one(inspector, 999999);
  EXPECT_EQ(p.visibility, Visibility::kHidden);
  EXPECT_EQ(p.user.why(), Missing::kNoPermission);
}

TEST_F(ProcessInspectorTest, CorruptStatKeepsWhatElseItCanRead) {
  auto inspector = make();
  const HostProcessInfo p = one(inspector, 4246);
  EXPECT_EQ(p.visibility, Visibility::kVisible);
  EXPECT_EQ(p.comm.why(), Missing::kError);
  EXPECT_EQ(p.cpu_percent.why(), Missing::kError);
  EXPECT_EQ(p.user.value(), "alice");
  EXPECT_EQ(p.command_line.value(), "broken");
}

TEST_F(ProcessInspectorTest, NoUptimeOrBootTime) {
  files_.fail("uptime", ENOENT);
  files_.fail("stat", EACCES);
  auto inspector = make();
  const HostProcessInfo p = one(inspector, 4242);
  EXPECT_EQ(p.cpu_percent.why(), Missing::kNotAvailable);
  EXPECT_EQ(p.start_time.why(), Missing::kNotAvailable);
  EXPECT_TRUE(p.rss_bytes.has_value());
}

TEST_F(ProcessInspectorTest, DuplicatePidsAreReadOnceAndKeepOrder) {
  auto inspector = make();
  const auto all = inspector.inspect({4243, 4242, 4243}, steady_clock::time_point(seconds(1)));
  ASSERT_EQ(all.size(), 3U);
  EXPECT_EQ(all[0].pid, 4243U);
  EXPECT_EQ(all[1].pid, 4242U);
  EXPECT_EQ(all[2].pid, 4243U);
  EXPECT_EQ(files_.reads("4243/stat"), 1);
}

TEST_F(ProcessInspectorTest, ForgetsProcessesThatLeftTheList) {
  auto inspector = make();
  const auto t0 = steady_clock::time_point(seconds(100));
  one(inspector, 4242, t0);
  one(inspector, 4243, t0 + seconds(1));  // 4242 is not in this round: forgotten
  EXPECT_EQ(one(inspector, 4242, t0 + seconds(2)).cpu_window, CpuWindow::kSinceStart);
}

TEST_F(ProcessInspectorTest, CommandLineIsBounded) {
  files_.replace("4242/cmdline", std::string(10000, 'x'));
  InspectorOptions options;
  options.command_line_max_bytes = 100;
  ProcessInspector inspector(files_, users_, options);
  const HostProcessInfo p = one(inspector, 4242);
  EXPECT_EQ(p.command_line.value(), std::string(100, 'x') + "\xE2\x80\xA6");
}

TEST(Visibility, Names) {
  EXPECT_EQ(to_string(Visibility::kVisible), "visible");
  EXPECT_EQ(to_string(Visibility::kNotVisible), "not_visible");
  EXPECT_EQ(to_string(Visibility::kOtherProcess), "other_process");
  EXPECT_EQ(to_string(Visibility::kHidden), "hidden");
  EXPECT_EQ(to_string(CpuWindow::kInterval), "interval");
  EXPECT_EQ(to_string(CpuWindow::kSinceStart), "since_start");
}

}  // namespace
}  // namespace gpumon::host
