// SPDX-License-Identifier: MIT
#include "cli/watch_keys.h"

#include <gtest/gtest.h>

#include <csignal>

#include "cli/test_snapshots.h"

namespace gpumon::cli {
namespace {

using namespace gpumon::cli::testing;

std::vector<KeyCode> codes(std::string_view bytes) {
  std::vector<KeyCode> out;
  for (const Key& k : decode_keys(bytes)) out.push_back(k.code);
  return out;
}

TEST(WatchKeys, DecodesCsiAndSs3Sequences) {
  using K = KeyCode;
  EXPECT_EQ(codes("\x1b[A\x1b[B\x1bOA\x1bOB"),
            (std::vector<K>{K::kUp, K::kDown, K::kUp, K::kDown}));
  EXPECT_EQ(
      codes("\x1b[5~\x1b[6~\x1b[H\x1b[F\x1b[1~\x1b[4~\x1bOH"),
      (std::vector<K>{K::kPageUp, K::kPageDown, K::kHome, K::kEnd, K::kHome, K::kEnd, K::kHome}));
  EXPECT_EQ(codes("\x1b"), (std::vector<K>{K::kEscape}));
  EXPECT_EQ(codes("\x1bx"), (std::vector<K>{K::kEscape, K::kChar}));
  EXPECT_EQ(codes("\x1b[1;5A"), (std::vector<K>{K::kUp}));  // with a modifier
  EXPECT_EQ(codes("\x1b[99"), (std::vector<K>{K::kEscape, K::kChar, K::kChar, K::kChar}));
  EXPECT_EQ(codes("a\r\n\x7f\x01"),
            (std::vector<K>{K::kChar, K::kEnter, K::kEnter, K::kBackspace, K::kOther}));
}

TEST(WatchKeys, ASequenceSplitBetweenReadsWaitsForItsEnd) {
  using K = KeyCode;
  std::string rest;
  auto first = decode_keys("j\x1b[", &rest);
  ASSERT_EQ(first.size(), 1U);
  EXPECT_EQ(rest, "\x1b[");
  std::string more;
  const auto second = decode_keys(rest + "A", &more);
  ASSERT_EQ(second.size(), 1U);
  EXPECT_EQ(second[0].code, K::kUp);
  EXPECT_TRUE(more.empty());
  // Nothing more came: a lone ESC is the Escape key after all.
  decode_keys("\x1b", &rest);
  EXPECT_EQ(rest, "\x1b");
  EXPECT_EQ(codes(rest), (std::vector<K>{K::kEscape}));
  // ESC then another key in the same read is not held back.
  rest.clear();
  EXPECT_EQ(decode_keys("\x1bx", &rest).size(), 2U);
  EXPECT_TRUE(rest.empty());
}

class WatchKeysTest : public ::testing::Test {
 protected:
  WatchKeysTest() {
    snap_ = empty_snapshot();
    for (unsigned i = 0; i < 3; ++i) snap_.processes.push_back(visible_process(i, 100 + i));
    snap_.processes.push_back(invisible_process(2, 900));
    lines_ = arrange_processes(snap_, {}, {});
  }
  UiAction press(std::string_view bytes) {
    UiAction last;
    for (const Key& k : decode_keys(bytes)) {
      last = handle_key(ui_, k, lines_, {0, 1, 2, 3, 4, 5}, 2);
      lines_ = arrange_processes(snap_, ui_.procs, {});
    }
    return last;
  }
  Snapshot snap_;
  std::vector<ProcessLine> lines_;
  WatchUi ui_;
};

TEST_F(WatchKeysTest, ArrowsMoveTheSelectionAndStopAtTheEnds) {
  press("\x1b[B");
  EXPECT_EQ(ui_.selected, (ProcessKey{100, 0}));
  press("jj\x1b[B\x1b[B\x1b[B");
  EXPECT_EQ(ui_.selected, (ProcessKey{900, 2}));
  press("k\x1b[H");
  EXPECT_EQ(ui_.selected, (ProcessKey{100, 0}));
  press("\x1b[F");
  EXPECT_EQ(ui_.selected, (ProcessKey{900, 2}));
  press("\x1b");
  EXPECT_FALSE(ui_.selected.has_value());
  press("\x1b[A");  // up from nothing: the last row
  EXPECT_EQ(ui_.selected, (ProcessKey{900, 2}));
}

TEST_F(WatchKeysTest, FilterFollowsTypingEnterKeepsEscapeClears) {
  press("/");
  EXPECT_EQ(ui_.mode, WatchUi::Mode::kFilter);
  press("10q");  // q is text here, not quit
  EXPECT_EQ(ui_.procs.filter, "10q");
  press("\x7f\x7f");
  EXPECT_EQ(ui_.procs.filter, "1");
  EXPECT_FALSE(press("\r").quit);
  EXPECT_EQ(ui_.mode, WatchUi::Mode::kNormal);
  EXPECT_EQ(ui_.procs.filter, "1");
  EXPECT_NE(footer_line(ui_, false).plain().find("filter: 1"), std::string::npos);
  press("/\x1b");
  EXPECT_EQ(ui_.procs.filter, "");
  press("/\xC3\xA9\x7f");  // backspace takes a whole UTF-8 character
  EXPECT_EQ(ui_.procs.filter, "");
  press(std::string(199, 'a') + "\xC3\xA9\xC3\xA9");  // the cap never splits a character
  EXPECT_EQ(ui_.procs.filter, std::string(199, 'a') + "\xC3\xA9");
}

TEST_F(WatchKeysTest, SortTreeAndGpuKeys) {
  press("ssr");
  EXPECT_EQ(ui_.procs.sort, ProcessSort::kSmUtil);
  EXPECT_TRUE(ui_.procs.reverse);
  EXPECT_NE(footer_line(ui_, false).plain().find("sort: SM % (reversed)"), std::string::npos);
  press("t");
  EXPECT_TRUE(ui_.procs.tree);
  press("g");
  EXPECT_EQ(ui_.procs.gpu, 0U);
  press("ggggg");
  EXPECT_EQ(ui_.procs.gpu, 5U);
  press("g");
  EXPECT_FALSE(ui_.procs.gpu.has_value());
}

TEST_F(WatchKeysTest, GTypesTheGpuToShow) {
  press("G");
  EXPECT_EQ(ui_.mode, WatchUi::Mode::kGpu);
  press("5x2\x7f");  // a letter is ignored, backspace takes the 2 back
  EXPECT_NE(footer_line(ui_, false).plain().find("GPU to show (index): 5_"), std::string::npos);
  press("\r");
  EXPECT_EQ(ui_.procs.gpu, 5U);
  EXPECT_EQ(ui_.mode, WatchUi::Mode::kNormal);
  press("G99\r");
  EXPECT_EQ(ui_.procs.gpu, 5U) << "not a GPU here: the filter stays";
  EXPECT_EQ(ui_.message, "No GPU 99 here (GPUs 0-5).");
  press("G\r");
  EXPECT_FALSE(ui_.procs.gpu.has_value()) << "Enter on nothing: all GPUs";
  press("G3\x1b");
  EXPECT_FALSE(ui_.procs.gpu.has_value()) << "Escape cancels";
  EXPECT_EQ(ui_.mode, WatchUi::Mode::kNormal);
}

TEST_F(WatchKeysTest, PagesMoveByAWholePage) {
  press("\x1b[6~");
  EXPECT_EQ(ui_.gpu_offset, 2U);
  press("\x1b[6~\x1b[6~\x1b[6~");
  EXPECT_EQ(ui_.gpu_offset, 4U) << "not past the last page";
  press("\x1b[5~\x1b[5~\x1b[5~");
  EXPECT_EQ(ui_.gpu_offset, 0U);
}

TEST_F(WatchKeysTest, SignalsNeedASelectionAndAYes) {
  press("K");
  EXPECT_EQ(ui_.mode, WatchUi::Mode::kNormal);
  EXPECT_NE(ui_.message.find("Select a process first"), std::string::npos);
  press("jT");
  ASSERT_EQ(ui_.mode, WatchUi::Mode::kConfirm);
  EXPECT_EQ(footer_line(ui_, false)
                .plain()
                .find(" Send SIGTERM to PID 100? y: send, other keys: "
                      "cancel.  python train.py"),
            0U)
      << "the keys come before the command line, which a narrow window cuts";
  UiAction a = press("n");
  EXPECT_FALSE(a.send.has_value());
  EXPECT_EQ(ui_.message, "Not sent.");
  a = press("Ky");
  ASSERT_TRUE(a.send.has_value());
  EXPECT_EQ(a.send->signal, SIGKILL);
  EXPECT_EQ(a.send->target, (ProcessKey{100, 0}));
  EXPECT_EQ(a.send->command, "python train.py --config configs/llama-8b.yaml --lr 3e-4");
  EXPECT_EQ(a.send->start_ticks, 100000U) << "the start the row was read with";
  EXPECT_FALSE(ui_.pending.has_value());
}

TEST_F(WatchKeysTest, AProcessGpumonCannotSeeIsNotSignalled) {
  press("\x1b[FK");
  ASSERT_TRUE(ui_.selected.has_value());
  EXPECT_EQ(ui_.selected->pid, 900U) << ui_.message;
  EXPECT_EQ(ui_.mode, WatchUi::Mode::kNormal);
  EXPECT_NE(ui_.message.find("PID 900 is not a process gpumon can see"), std::string::npos);
}

TEST_F(WatchKeysTest, QuitOnlyOutsideTheFilter) {
  EXPECT_TRUE(press("q").quit);
  EXPECT_TRUE(press("Q").quit);
}

}  // namespace
}  // namespace gpumon::cli
