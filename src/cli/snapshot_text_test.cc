// SPDX-License-Identifier: MIT
// Golden tests of the `gpumon` snapshot text over hand-made snapshots (test_snapshots.h).
#include "cli/snapshot_text.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

#include "cli/test_snapshots.h"

namespace gpumon::cli {
namespace {

using namespace gpumon::cli::testing;

class SnapshotTextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("TZ", "UTC", 1);
    ::tzset();
    options_.version = "0.1.0";
  }
  std::string text(const Snapshot& s) const { return format_snapshot_text(s, options_); }

  TextOptions options_;
};

constexpr const char* kHeader =
    "gpumon 0.1.0  driver 580.159.04  CUDA 13.0  host node01  2026-12-02 18:46:52 UTC\n"
    "\n"
    "GPU  Name          Util  MemUtil  Memory used / total                    Temp   HBM  "
    "Power / limit\n";

constexpr const char* kHealthyRows =
    "  0  NVIDIA H200   98 %     45 %   70.0 / 140.0 GiB   50 % [#####.....]  62°C  70°C    "
    "612 / 700 W\n"
    "     P0  SM 1980/1980 MHz    mem 3201/3201 MHz    ECC corr 0 uncorr 0   throttle: none\n";

TEST_F(SnapshotTextTest, HealthyGpuWithAProcess) {
  Snapshot s = empty_snapshot();
  s.gpus = {healthy_gpu(0)};
  s.processes = {visible_process(0)};
  EXPECT_EQ(text(s), std::string(kHeader) + kHealthyRows +
                         "\n"
                         "Processes\n"
                         "GPU       PID  User    GPU mem     CPU %       RSS  Command\n"
                         "  0      4242  alice  70.0 GiB      98.5  12.3 GiB  python train.py "
                         "--config configs/llama-8b.yaml --lr 3e-4\n");
}

TEST_F(SnapshotTextTest, MissingFieldsPrintTheirReasonNeverZero) {
  Snapshot s = empty_snapshot();
  s.gpus = {gpu_with_missing_fields(0)};
  EXPECT_EQ(text(s), std::string(kHeader) +
                         "  0  NVIDIA H200    N/A      err denied / 140.0 GiB denied              "
                         " 62°C   n/s            n/s\n"
                         "     N/A SM N/A              mem 3201/3201 MHz    ECC n/s              "
                         " throttle: n/s\n"
                         "\n"
                         "Processes\n"
                         "GPU       PID  User   GPU mem     CPU %       RSS  Command\n"
                         "No running GPU processes.\n"
                         "GPU 0: process list not supported\n");
}

TEST_F(SnapshotTextTest, LostGpuSaysSoInItsRow) {
  Snapshot s = empty_snapshot();
  s.gpus = {healthy_gpu(0), lost_gpu(1)};
  s.gpus[0].process_count = std::size_t{0};
  EXPECT_EQ(text(s), std::string(kHeader) + kHealthyRows +
                         "  1  NVIDIA H200  GPU LOST  00000000:18:00.0  (see `dmesg | grep "
                         "-i xid`)\n"
                         "\n"
                         "Processes\n"
                         "GPU       PID  User   GPU mem     CPU %       RSS  Command\n"
                         "No running GPU processes.\n");
}

TEST_F(SnapshotTextTest, GpuThatCannotBeOpenedSaysWhyNotLost) {
  Snapshot s = empty_snapshot();
  s.gpus = {healthy_gpu(0), unopened_gpu(1)};
  s.gpus[0].process_count = std::size_t{0};
  const std::string out = text(s);
  EXPECT_NE(out.find("\n  1               CANNOT OPEN  (Insufficient Permissions)\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("LOST"), std::string::npos) << out;
}

TEST_F(SnapshotTextTest, SimulatedGpusAreLabelledOnTheFirstLine) {
  Snapshot s = empty_snapshot();
  s.system.simulated_scenario = "demo";
  s.gpus = {healthy_gpu(0)};
  const std::string out = text(s);
  EXPECT_EQ(out.substr(0, out.find('\n')),
            "SIMULATED GPUs \xE2\x80\x94 scenario \"demo\" (gpumon fake NVML; not real hardware)");
  EXPECT_EQ(out.substr(out.find('\n') + 1), std::string(kHeader) + kHealthyRows +
                                                "\n"
                                                "Processes\n"
                                                "GPU       PID  User   GPU mem     CPU %       "
                                                "RSS  Command\n"
                                                "No running GPU processes.\n");
}

TEST_F(SnapshotTextTest, ProcessesNotVisibleAreNotGuessed) {
  Snapshot s = empty_snapshot();
  s.gpus = {healthy_gpu(0)};
  ProcessRow hidden = invisible_process(0, 900);
  hidden.host.visibility = host::Visibility::kHidden;
  hidden.gpu.name = Reading<std::string>::missing(Missing::kNotAvailable);
  s.processes = {invisible_process(0), hidden};
  EXPECT_EQ(text(s), std::string(kHeader) + kHealthyRows +
                         "\n"
                         "Processes\n"
                         "GPU       PID  User   GPU mem     CPU %       RSS  Command\n"
                         "  0       848  -       14 MiB         -         -  [not visible] "
                         "python3\n"
                         "  0       900  -       14 MiB         -         -  [hidden by hidepid]\n"
                         "[not visible]: no such PID in this /proc: the process exited, or gpumon "
                         "runs in a container without --pid=host (NVML reports host PIDs)\n");
}

TEST_F(SnapshotTextTest, SingleReadingCpuIsLabelledAsAnAverage) {
  Snapshot s = empty_snapshot();
  s.gpus = {healthy_gpu(0)};
  s.processes = {visible_process(0)};
  s.processes[0].host.cpu_window = host::CpuWindow::kSinceStart;
  EXPECT_NE(text(s).find("GPU       PID  User    GPU mem  avg CPU%       RSS  Command\n"),
            std::string::npos);
}

TEST_F(SnapshotTextTest, IdsOnlyWhenAskedFor) {
  Snapshot s = empty_snapshot();
  s.gpus = {healthy_gpu(0)};
  const std::string plain = text(s);
  EXPECT_EQ(plain.find("GPU-5ca1ab1e"), std::string::npos);
  EXPECT_EQ(plain.find("1650000000000"), std::string::npos);

  options_.show_uuid = true;
  std::string out = text(s);
  EXPECT_NE(out.find("\n     uuid GPU-5ca1ab1e-0000-4000-8000-000000000000\n"), std::string::npos);
  EXPECT_EQ(out.find("serial"), std::string::npos);

  options_.show_uuid = false;
  options_.show_serial = true;
  out = text(s);
  EXPECT_NE(out.find("\n     serial 1650000000000\n"), std::string::npos);
  EXPECT_EQ(out.find("GPU-5ca1ab1e"), std::string::npos);
}

TEST_F(SnapshotTextTest, ThrottleReasonsInWords) {
  Snapshot s = empty_snapshot();
  s.gpus = {healthy_gpu(0), healthy_gpu(1)};
  s.gpus[0].sample.clock_event_reasons = std::uint64_t{0x1};   // idle
  s.gpus[1].sample.clock_event_reasons = std::uint64_t{0x44};  // power cap, HW thermal
  const std::string out = text(s);
  EXPECT_NE(out.find("throttle: idle\n"), std::string::npos);
  EXPECT_NE(out.find("throttle: power cap, HW thermal slowdown\n"), std::string::npos);
}

TEST_F(SnapshotTextTest, NoGpus) {
  Snapshot s = empty_snapshot();
  EXPECT_NE(text(s).find("\nNo NVIDIA GPUs found.\n"), std::string::npos);
}

TEST_F(SnapshotTextTest, NoEscapeCodesWhenColourIsOff) {
  Snapshot s = empty_snapshot();
  s.system.simulated_scenario = "demo";
  s.gpus = {healthy_gpu(0), lost_gpu(1), gpu_with_missing_fields(2)};
  s.gpus[0].sample.clock_event_reasons = std::uint64_t{0x20};
  EXPECT_EQ(text(s).find('\x1b'), std::string::npos);
}

TEST_F(SnapshotTextTest, ColourMarksProblemsAndTheBanner) {
  Snapshot s = empty_snapshot();
  s.system.simulated_scenario = "demo";
  s.gpus = {healthy_gpu(0), lost_gpu(1)};
  s.gpus[0].sample.clock_event_reasons = std::uint64_t{0x20};  // thermal slowdown
  s.gpus[0].sample.temperature_gpu_c = 90U;
  options_.style = RenderStyle{true, true};
  const std::string out = text(s);
  EXPECT_EQ(out.rfind("\x1b[1;7;33mSIMULATED GPUs", 0), 0U);
  EXPECT_NE(out.find("\x1b[1;31mthermal slowdown\x1b[0m"), std::string::npos);
  EXPECT_NE(out.find("\x1b[1;31m90°C\x1b[0m"), std::string::npos);
  EXPECT_NE(out.find("\x1b[1;31mGPU LOST\x1b[0m"), std::string::npos);
}

TEST_F(SnapshotTextTest, LinesAreCutToTheTerminalWidth) {
  Snapshot s = empty_snapshot();
  s.gpus = {healthy_gpu(0)};
  s.processes = {visible_process(0)};
  options_.width = 80;
  const std::string out = text(s);
  // 52 columns before the command, 27 of it, then the ellipsis in column 80.
  EXPECT_NE(out.find("  0      4242  alice  70.0 GiB      98.5  12.3 GiB  python train.py --config "
                     "co\xE2\x80\xA6\n"),
            std::string::npos);
  std::size_t start = 0;
  while (start < out.size()) {
    const std::size_t end = out.find('\n', start);
    EXPECT_LE(display_width(out.substr(start, end - start)), 80U);
    start = end + 1;
  }
}

}  // namespace
}  // namespace gpumon::cli
