// SPDX-License-Identifier: MIT
#include "cli/watch_view.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "cli/test_snapshots.h"
#include "gpu/metric_catalog.h"

namespace gpumon::cli {
namespace {

using namespace gpumon::cli::testing;

class WatchViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("TZ", "UTC", 1);
    ::tzset();
    options_.version = "0.1.0";
    options_.style = RenderStyle{false, false};
    options_.unicode = false;
  }

  static Snapshot eight_gpus(bool simulated) {
    Snapshot s = empty_snapshot();
    if (simulated) s.system.simulated_scenario = "demo";
    for (unsigned i = 0; i < 8; ++i) {
      s.gpus.push_back(healthy_gpu(i));
      s.processes.push_back(visible_process(i, 1000 + i));
    }
    return s;
  }

  static std::size_t count_prefix(const std::vector<std::string>& lines, const std::string& p) {
    std::size_t n = 0;
    for (const std::string& l : lines) n += l.rfind(p, 0) == 0 ? 1 : 0;
    return n;
  }

  ViewOptions options_;
  GpuHistories history_;
};

TEST_F(WatchViewTest, OneGpuGolden) {
  Snapshot s = empty_snapshot();
  s.gpus = {healthy_gpu(0)};
  s.processes = {visible_process(0)};
  s.processes[0].gpu.sm_util_pct = 95U, s.processes[0].gpu.mem_util_pct = 44U;
  host::HostUsage host;
  host.cpu_pct = 35.2, host.cpus = 64;
  host.mem_used_bytes = 120ULL << 30, host.mem_total_bytes = 503ULL << 30;
  s.host_usage = host;
  for (double u : {0.0, 50.0, 98.0}) {
    s.gpus[0].sample.utilization_gpu_pct = static_cast<unsigned>(u);
    history_.record(s);
  }
  options_.width = 100;
  options_.height = 12;
  const std::vector<std::string> expected = {
      " gpumon watch  2026-12-02 18:46:52 UTC  every 1 s  host node01  CPU 35 % of 64  RAM 120.0 / "
      "503.0 \xE2\x80\xA6",
      "GPU 0  NVIDIA H200  P0  62°C HBM 70°C    612 / 700 W  SM 1980/1980 MHz  mem 3201/3201 MHz",
      "  util   98 %                        _=#   mem   50 %  70.0 / 140.0 GiB                     "
      "   "
      "===",
      "  mem-util  45 %   ECC corr 0 uncorr 0   throttle: none",
      "",
      "Processes",
      "GPU       PID  User    GPU mem  SM %  mem %     CPU %       RSS  Command",
      "  0      4242  alice  70.0 GiB    95     44      98.5  12.3 GiB  python train.py --config "
      "configs/\xE2\x80\xA6",
      "",
      "",
      "",
      " q quit  j/k select  s sort: GPU  r reverse  / filter  g/G GPU: all  t tree  T/K term/kill  "
      "PgUp/P\xE2\x80\xA6",
  };
  EXPECT_EQ(render_watch_frame(s, history_, options_), expected);
}

TEST_F(WatchViewTest, SmActivityShowsWhereTheGpuHasGpm) {
  Snapshot s = empty_snapshot();
  s.gpus = {healthy_gpu(0), healthy_gpu(1)};
  s.gpus[0].sample.sm_active_ratio = 0.874;
  s.gpus[1].sample.sm_active_ratio = Reading<double>::missing(Missing::kNotSupported);
  history_.record(s);
  options_.width = 120;
  options_.height = 20;
  const auto lines = render_watch_frame(s, history_, options_);
  EXPECT_EQ(count_prefix(lines, "  mem-util  45 %   SM active  87 %   ECC"), 1U);
  EXPECT_EQ(count_prefix(lines, "  mem-util  45 %   ECC"), 1U) << "no GPM: nothing shown";
}

TEST_F(WatchViewTest, PcieTrafficOnALineOfItsOwnWhereTheGpuHasIt) {
  Snapshot s = empty_snapshot();
  s.gpus = {healthy_gpu(0), healthy_gpu(1), healthy_gpu(2)};
  s.gpus[0].sample.pcie_rx_bytes_per_s = 2.5 * (1ULL << 30);
  s.gpus[0].sample.pcie_tx_bytes_per_s = Reading<double>::missing(Missing::kError);
  for (auto* r : {&s.gpus[1].sample.pcie_rx_bytes_per_s, &s.gpus[1].sample.pcie_tx_bytes_per_s})
    *r = Reading<double>::missing(Missing::kNotSupported);
  history_.record(s);
  options_.width = 80;
  options_.height = 24;
  EXPECT_EQ(count_prefix(render_watch_frame(s, history_, options_), "  PCIe "), 0U)
      << "a source that does not read PCIe: no line";
  options_.pcie = true;
  const auto lines = render_watch_frame(s, history_, options_);
  EXPECT_EQ(count_prefix(lines, "  PCIe "), 2U) << "GPU 1 cannot give it: no line";
  const auto at = std::find(lines.begin(), lines.end(), "  PCIe rx 2.5 GiB/s  tx err");
  ASSERT_NE(at, lines.end());
  EXPECT_EQ((at - 1)->rfind("  mem-util", 0), 0U) << "below its GPU's status line";
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "  PCIe rx N/A  tx N/A"), 1)
      << "GPU 2, not read yet: the line is there, so the layout does not move when it is";
}

TEST_F(WatchViewTest, TheIoLineCountsWhenTheBlocksMustFit) {
  Snapshot s = empty_snapshot();
  for (unsigned i = 0; i < 4; ++i) s.gpus.push_back(healthy_gpu(i));
  history_.record(s);
  options_.width = 80;
  options_.height = 19;  // 2 + 4 * 3 + 4 + footer: the blocks fit without the PCIe lines
  EXPECT_EQ(count_prefix(render_watch_frame(s, history_, options_), "  util "), 4U);
  options_.pcie = true;
  EXPECT_EQ(count_prefix(render_watch_frame(s, history_, options_), "  util "), 0U)
      << "with them they do not: one line per GPU";
}

TEST_F(WatchViewTest, EightGpuBlocksWithTheSimulatedLabelFirst) {
  const Snapshot s = eight_gpus(true);
  history_.record(s);
  options_.width = 160;
  options_.height = 50;
  options_.style = RenderStyle{false, true};
  const auto lines = render_watch_frame(s, history_, options_);
  EXPECT_EQ(lines[0].rfind("\x1b[1;7mSIMULATED GPUs \xE2\x80\x94 scenario \"demo\"", 0), 0U);
  std::size_t blocks = 0;
  for (const std::string& l : lines) blocks += l.find("GPU ") == 4 ? 1 : 0;  // after "\x1b[1m"
  EXPECT_EQ(blocks, 8U);
  EXPECT_EQ(count_prefix(lines, "  util "), 8U);
  EXPECT_LE(lines.size(), 50U);
}

TEST_F(WatchViewTest, SmallWindowFallsBackToOneLinePerGpu) {
  const Snapshot s = eight_gpus(true);
  history_.record(s);
  options_.width = 120;
  options_.height = 16;
  const auto lines = render_watch_frame(s, history_, options_);
  ASSERT_LE(lines.size(), 16U);
  EXPECT_EQ(lines[0].rfind("SIMULATED GPUs", 0), 0U);
  for (unsigned i = 0; i < 8; ++i) {
    EXPECT_EQ(lines[2 + i].rfind(" " + std::to_string(i) + "   98 %", 0), 0U) << lines[2 + i];
  }
}

TEST_F(WatchViewTest, TinyWindowKeepsTheLabelAndSaysWhatIsCut) {
  const Snapshot s = eight_gpus(true);
  options_.width = 60;
  options_.height = 6;
  const auto lines = render_watch_frame(s, history_, options_);
  ASSERT_EQ(lines.size(), 6U);
  EXPECT_EQ(lines[0].rfind("SIMULATED GPUs", 0), 0U);
  EXPECT_EQ(lines[2], "GPUs 0-0 of 8: PgUp/PgDn, or enlarge the window");
  EXPECT_EQ(lines[3].rfind(" 0 ", 0), 0U) << lines[3];
  EXPECT_EQ(lines[5].rfind(" q quit  j/k select", 0), 0U) << "the keys on the last line";
  options_.height = 1;
  const auto one = render_watch_frame(s, history_, options_);
  ASSERT_EQ(one.size(), 1U);
  EXPECT_EQ(one[0].rfind("SIMULATED GPUs", 0), 0U);
}

TEST_F(WatchViewTest, EveryLineFitsTheWindow) {
  Snapshot s = eight_gpus(true);
  s.gpus[3] = lost_gpu(3);
  s.gpus[5] = gpu_with_missing_fields(5);
  for (int i = 0; i < 70; ++i) history_.record(s);
  for (std::size_t width : {20U, 40U, 80U, 132U, 250U}) {
    for (std::size_t height : {1U, 5U, 24U, 60U}) {
      options_.width = width;
      options_.height = height;
      options_.unicode = true;
      const auto lines = render_watch_frame(s, history_, options_);
      EXPECT_LE(lines.size(), height);
      for (const std::string& l : lines) {
        EXPECT_LE(display_width(l), width - 1) << width << "x" << height << ": " << l;
      }
    }
  }
}

TEST_F(WatchViewTest, LostGpuInItsBlock) {
  Snapshot s = empty_snapshot();
  s.gpus = {healthy_gpu(0), lost_gpu(1)};
  options_.width = 140;
  options_.height = 30;
  s.gpus[1].last_xid = 79;
  auto lines = render_watch_frame(s, history_, options_);
  // The board (index, name, bus id), the XID the view saw and where to look next.
  EXPECT_EQ(count_prefix(lines,
                         "GPU 1  NVIDIA H200  GPU LOST  00000000:18:00.0  XID 79: GPU has "
                         "fallen off the bus (hardware)  (see `dmesg | grep -i xid`)"),
            1U);
  options_.height = 8;  // compact: one line per GPU, naming the board too
  lines = render_watch_frame(s, history_, options_);
  EXPECT_EQ(count_prefix(lines, " 1 NVIDIA H200  GPU LOST  00000000:18:00.0  XID 79"), 1U);
}

TEST_F(WatchViewTest, StaleGpuSaysWhichCallHasNotReturned) {
  Snapshot s = empty_snapshot();
  s.gpus = {healthy_gpu(0), healthy_gpu(1)};
  DeviceSample& stale = s.gpus[1].sample;
  set_all_missing(stale, Missing::kStale);  // as the sampler publishes it
  stale.stale = StaleCall{"nvmlDeviceGetTemperature", stale.mono_time - std::chrono::seconds(12)};
  options_.width = 140;
  options_.height = 30;
  auto lines = render_watch_frame(s, history_, options_);
  EXPECT_EQ(count_prefix(lines,
                         "GPU 1  NVIDIA H200  NOT RESPONDING  nvmlDeviceGetTemperature has not "
                         "returned for 12 s  (the driver may be hung: try `nvidia-smi`)"),
            1U);
  for (const std::string& l : lines) EXPECT_EQ(l.find("LOST"), std::string::npos) << l;
  options_.height = 8;  // compact: one line per GPU
  lines = render_watch_frame(s, history_, options_);
  EXPECT_EQ(count_prefix(lines, " 1 NVIDIA H200  NOT RESPONDING  nvmlDeviceGetTemperature"), 1U);
}

TEST_F(WatchViewTest, GpuThatCannotBeOpenedInItsBlock) {
  Snapshot s = empty_snapshot();
  s.gpus = {healthy_gpu(0), unopened_gpu(1)};
  options_.width = 100;
  options_.height = 30;
  auto lines = render_watch_frame(s, history_, options_);
  const auto row = std::find_if(lines.begin(), lines.end(),
                                [](const std::string& l) { return l.rfind("GPU 1 ", 0) == 0; });
  ASSERT_NE(row, lines.end());
  EXPECT_NE(row->find("CANNOT OPEN  (Insufficient Permissions)"), std::string::npos) << *row;
  EXPECT_EQ(row->find("LOST"), std::string::npos) << *row;
  options_.height = 8;  // compact: one line per GPU
  lines = render_watch_frame(s, history_, options_);
  EXPECT_EQ(count_prefix(lines, " 1 CANNOT OPEN: Insufficient Permissions"), 1U);
}

TEST_F(WatchViewTest, TitleBarInReverseVideoWhenNotSimulated) {
  Snapshot s = empty_snapshot();
  options_.style = RenderStyle{false, true};
  const auto lines = render_watch_frame(s, history_, options_);
  EXPECT_EQ(lines[0].rfind("\x1b[1;7m gpumon watch  2026-12-02 18:46:52 UTC  every 1 s  host", 0),
            0U);
  EXPECT_EQ(lines[1], "No NVIDIA GPUs found.");
}

TEST_F(WatchViewTest, SelectedRowInReverseVideoAndScrolledIntoView) {
  Snapshot s = eight_gpus(false);
  for (unsigned i = 0; i < 30; ++i) s.processes.push_back(visible_process(i % 8, 2000 + i));
  history_.record(s);
  options_.width = 120;
  options_.height = 24;
  options_.style = RenderStyle{false, true};
  WatchUi ui;
  ui.selected = ProcessKey{2029, 5};  // 31st of 38, below the rows that fit
  const auto lines = arrange_processes(s, ui.procs, {});
  const auto frame = render_watch_frame(s, history_, options_, ui, &lines);
  ASSERT_EQ(frame.size(), 24U);
  std::size_t reversed = 0;
  for (const std::string& l : frame)
    if (l.rfind("\x1b[1;7m", 0) == 0 && l.find("2029") != std::string::npos) ++reversed;
  EXPECT_EQ(reversed, 1U) << "the selected row is shown, in reverse video\n"
                          << ::testing::PrintToString(frame);
  bool above = false;
  for (const std::string& l : frame) above = above || l.find(" above, ") != std::string::npos;
  EXPECT_TRUE(above) << "the rows scrolled out above are counted";
}

TEST_F(WatchViewTest, GpuFilterShowsOneBlockAndItsProcesses) {
  const Snapshot s = eight_gpus(true);
  history_.record(s);
  options_.width = 120;
  options_.height = 24;
  WatchUi ui;
  ui.procs.gpu = 6;
  const auto frame = render_watch_frame(s, history_, options_, ui);
  EXPECT_EQ(count_prefix(frame, "GPU 6  "), 1U);
  EXPECT_EQ(count_prefix(frame, "GPU 0  "), 0U);
  EXPECT_EQ(count_prefix(frame, "  6      1006"), 1U);
  EXPECT_EQ(count_prefix(frame, "  0      1000"), 0U);
  EXPECT_NE(frame.back().find("g/G GPU 6"), std::string::npos) << frame.back();
}

TEST_F(WatchViewTest, PagesThroughManyGpus) {
  Snapshot s = empty_snapshot();
  for (unsigned i = 0; i < 64; ++i) s.gpus.push_back(healthy_gpu(i));
  history_.record(s);
  options_.width = 200;
  options_.height = 50;
  WatchUi ui;
  FrameLayout layout;
  auto frame = render_watch_frame(s, history_, options_, ui, nullptr, &layout);
  ASSERT_GT(layout.gpus_shown, 10U);
  EXPECT_EQ(frame[1], fmt::format("GPUs 0-{} of 64: PgUp/PgDn, or enlarge the window",
                                  layout.gpus_shown - 1));
  EXPECT_EQ(frame[2].rfind(" 0 ", 0), 0U);
  const std::size_t page = layout.gpus_shown;
  EXPECT_EQ(layout.gpus_per_page, page);
  std::vector<unsigned> all(64);
  for (unsigned i = 0; i < 64; ++i) all[i] = i;
  auto press = [&](KeyCode k) {
    handle_key(ui, Key{k, 0}, {}, all, layout.gpus_per_page);
    return render_watch_frame(s, history_, options_, ui, nullptr, &layout);
  };
  frame = press(KeyCode::kPageDown);
  EXPECT_EQ(ui.gpu_offset, page);
  EXPECT_EQ(layout.gpus_shown, std::min<std::size_t>(page, 64 - page));
  EXPECT_EQ(layout.gpus_per_page, page) << "a short last page does not shrink the page";
  EXPECT_EQ(frame[1], fmt::format("GPUs {}-{} of 64: PgUp/PgDn, or enlarge the window", page,
                                  page + layout.gpus_shown - 1));
  EXPECT_EQ(frame[2].rfind(fmt::format("{:>2} ", page), 0), 0U) << frame[2];
  // In a 24-line window (several pages), to the last page and back: PgUp retraces each PgDn.
  options_.height = 24;
  ui.gpu_offset = 0;
  frame = render_watch_frame(s, history_, options_, ui, nullptr, &layout);
  std::vector<std::size_t> down = {0}, up;
  while (press(KeyCode::kPageDown), ui.gpu_offset != down.back()) down.push_back(ui.gpu_offset);
  ASSERT_GE(down.size(), 3U) << ::testing::PrintToString(down);
  EXPECT_LT(layout.gpus_shown, layout.gpus_per_page) << "the last page is short";
  while (press(KeyCode::kPageUp), up.empty() || ui.gpu_offset != up.back())
    up.push_back(ui.gpu_offset);
  std::reverse(up.begin(), up.end());
  down.pop_back();
  EXPECT_EQ(up, down);
}

TEST_F(WatchViewTest, TreeShowsTheLauncherAndBranches) {
  Snapshot s = empty_snapshot();
  s.gpus = {healthy_gpu(0), healthy_gpu(1)};
  for (unsigned i = 0; i < 2; ++i) {
    s.processes.push_back(visible_process(i, 201 + i));
    s.processes.back().host.ppid = 100U;
  }
  history_.record(s);
  options_.width = 120;
  options_.height = 30;
  WatchUi ui;
  ui.procs.tree = true;
  std::map<unsigned, host::ProcessBrief> launchers;
  launchers[100] = host::ProcessBrief{100, 1, 7, "torchrun --nproc_per_node 2 train.py"};
  const auto lines = arrange_processes(s, ui.procs, launchers);
  const auto frame = render_watch_frame(s, history_, options_, ui, &lines);
  std::string text;
  for (const std::string& l : frame) text += l + "\n";
  EXPECT_NE(text.find("  -       100"), std::string::npos) << text;
  EXPECT_NE(text.find("torchrun --nproc_per_node 2 train.py"), std::string::npos) << text;
  EXPECT_NE(text.find("`- python train.py"), std::string::npos) << text;
}

TEST(LocaleIsUtf8, FirstSetVariableDecides) {
  EXPECT_TRUE(locale_is_utf8(nullptr, nullptr, "en_US.UTF-8"));
  EXPECT_TRUE(locale_is_utf8("C.utf8", nullptr, nullptr));
  EXPECT_FALSE(locale_is_utf8("C", nullptr, "en_US.UTF-8"));  // LC_ALL wins
  EXPECT_TRUE(locale_is_utf8("", "", "de_DE.utf8"));          // empty counts as unset
  EXPECT_FALSE(locale_is_utf8(nullptr, nullptr, nullptr));
  EXPECT_FALSE(locale_is_utf8(nullptr, nullptr, "POSIX"));
}

}  // namespace
}  // namespace gpumon::cli
