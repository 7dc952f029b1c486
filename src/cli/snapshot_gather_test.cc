// SPDX-License-Identifier: MIT
// gather_snapshot over a GpuBackend written here (no NVML) and the fake /proc tree.
#include "cli/snapshot_gather.h"

#include <gtest/gtest.h>

#include "cli/test_snapshots.h"

namespace gpumon::cli {
namespace {

class TableBackend final : public GpuBackend {
 public:
  SystemInfo system_info = testing::test_system();
  std::vector<GpuSnapshot> gpus;
  std::vector<Reading<std::vector<GpuProcess>>> procs;
  MetricSet asked;

  const SystemInfo& system() const override { return system_info; }
  unsigned device_count() const override { return static_cast<unsigned>(gpus.size()); }
  const DeviceStatic& device(unsigned i) const override { return gpus.at(i).info; }
  DeviceSample sample(unsigned i, MetricSet what) override {
    asked = what;
    return gpus.at(i).sample;
  }
  Reading<std::vector<GpuProcess>> processes(unsigned i) override { return procs.at(i); }
};

GpuProcess proc(unsigned pid, std::uint64_t bytes) {
  GpuProcess p;
  p.pid = pid;
  p.used_memory_bytes = bytes;
  p.name = std::string("python3");
  return p;
}

class GatherTest : public ::testing::Test {
 protected:
  GatherTest()
      : files_(std::string(GPUMON_TESTDATA_DIR) + "/proc"),
        users_([](unsigned uid) -> std::optional<std::string> {
          return uid == 1000 ? std::optional<std::string>("alice") : std::nullopt;
        }),
        inspector_(files_, users_, host::InspectorOptions{100, 4096, 4096, true}) {}

  host::DiskProcFiles files_;
  host::UserNames users_;
  host::ProcessInspector inspector_;
};

TEST_F(GatherTest, JoinsNvmlProcessesWithTheirHostDetails) {
  TableBackend b;
  b.gpus = {testing::healthy_gpu(0), testing::healthy_gpu(1)};
  b.procs = {std::vector<GpuProcess>{proc(999999, 1 << 20), proc(4242, 2 << 20)},
             std::vector<GpuProcess>{proc(4242, 3 << 20)}};
  const auto t = std::chrono::system_clock::time_point(std::chrono::seconds(1800000000));
  const Snapshot s = gather_snapshot(b, inspector_, "node01", std::chrono::steady_clock::now(), t);

  EXPECT_EQ(s.hostname, "node01");
  EXPECT_EQ(s.taken_at, t);
  ASSERT_EQ(s.gpus.size(), 2U);
  EXPECT_EQ(s.gpus[0].process_count.value(), 2U);
  ASSERT_EQ(s.processes.size(), 3U);
  // Ordered by GPU, then PID; the GPU index comes from the list it was in.
  EXPECT_EQ(s.processes[0].gpu.pid, 4242U);
  EXPECT_EQ(s.processes[0].gpu.gpu_index, 0U);
  EXPECT_EQ(s.processes[1].gpu.pid, 999999U);
  EXPECT_EQ(s.processes[2].gpu.gpu_index, 1U);
  EXPECT_EQ(s.processes[0].host.user.value(), "alice");
  EXPECT_EQ(s.processes[0].gpu.user.value(), "alice");  // GpuProcess's host fields filled too
  EXPECT_EQ(s.processes[0].gpu.command_line.value(), "python train.py --lr 0.1");
  EXPECT_EQ(s.processes[1].host.visibility, host::Visibility::kNotVisible);
  EXPECT_EQ(s.processes[2].host.command_line.value(), "python train.py --lr 0.1");
  // Only the groups the snapshot shows are asked for: energy (milliseconds) is not.
  EXPECT_TRUE(b.asked.has(MetricGroup::kUtilization));
  EXPECT_TRUE(b.asked.has(MetricGroup::kClockEvents));
  EXPECT_FALSE(b.asked.has(MetricGroup::kEnergy));
}

TEST_F(GatherTest, ProcessListFailuresAreKeptPerGpu) {
  TableBackend b;
  b.gpus = {testing::healthy_gpu(0), testing::lost_gpu(1)};
  b.procs = {Reading<std::vector<GpuProcess>>::missing(Missing::kNotSupported),
             Reading<std::vector<GpuProcess>>::missing(Missing::kGpuLost)};
  const Snapshot s = gather_snapshot(b, inspector_, "node01");
  EXPECT_EQ(s.gpus[0].process_count.why(), Missing::kNotSupported);
  EXPECT_EQ(s.gpus[1].process_count.why(), Missing::kGpuLost);
  EXPECT_TRUE(s.gpus[1].sample.lost);
  EXPECT_TRUE(s.processes.empty());
}

TEST_F(GatherTest, StringsFromNvmlAreMadePrintable) {
  TableBackend b;
  b.system_info.driver_version = std::string("580\x1b[2J");
  b.system_info.simulated_scenario = "de\xffmo";
  b.gpus = {testing::healthy_gpu(0)};
  b.gpus[0].info.name = std::string("NVIDIA \x1b]0;pwned\x07H200");
  GpuProcess p = proc(4242, 1);
  p.name = std::string("py\xc3");
  b.procs = {std::vector<GpuProcess>{p}};
  const Snapshot s = gather_snapshot(b, inspector_, "node01");
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(s.system.driver_version.value(), "580" + fffd + "[2J");
  EXPECT_EQ(s.system.simulated_scenario, "de" + fffd + "mo");
  EXPECT_EQ(s.gpus[0].info.name.value(), "NVIDIA " + fffd + "]0;pwned" + fffd + "H200");
  EXPECT_EQ(s.processes[0].gpu.name.value(), "py" + fffd);
}

TEST_F(GatherTest, NoGpus) {
  TableBackend b;
  const Snapshot s = gather_snapshot(b, inspector_, "");
  EXPECT_TRUE(s.gpus.empty());
  EXPECT_TRUE(s.processes.empty());
}

}  // namespace
}  // namespace gpumon::cli
