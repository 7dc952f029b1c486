// SPDX-License-Identifier: MIT
#include "cli/styled_line.h"

#include <gtest/gtest.h>

namespace gpumon::cli {
namespace {

TEST(DisplayWidth, CountsColumnsNotBytes) {
  EXPECT_EQ(display_width(""), 0U);
  EXPECT_EQ(display_width("abc"), 3U);
  EXPECT_EQ(display_width("d\xC3\xA9j\xC3\xA0"), 4U);        // déjà
  EXPECT_EQ(display_width("\xE4\xB8\xAD\xE6\x96\x87"), 4U);  // 中文: wide
  EXPECT_EQ(display_width("e\xCC\x81"), 1U);                 // e + combining acute
  EXPECT_EQ(display_width("\xF0\x9F\x98\x80"), 2U);          // emoji
  EXPECT_EQ(display_width("\xE2\x96\x81\xE2\x96\x88"), 2U);  // sparkline blocks
  EXPECT_EQ(display_width("\xFF"), 1U);                      // malformed byte
}

TEST(FitWidth, NeverSplitsACharacter) {
  EXPECT_EQ(fit_width("abcdef", 3), "abc");
  EXPECT_EQ(fit_width("ab", 5), "ab");
  EXPECT_EQ(fit_width("\xE4\xB8\xAD\xE6\x96\x87", 3), "\xE4\xB8\xAD");  // 2 + 2 > 3
  EXPECT_EQ(fit_width("\xE4\xB8\xAD", 1), "");
}

TEST(StyledLine, PadsAndAligns) {
  StyledLine line("ab");
  line.pad_to(5).add("c").add_right("42", 4);
  EXPECT_EQ(line.plain(), "ab   c  42");
  EXPECT_EQ(line.width(), 10U);
  line.pad_to(3);  // already wider: nothing
  EXPECT_EQ(line.width(), 10U);
}

TEST(StyledLine, RendersWithoutEscapesWhenStyleIsOff) {
  StyledLine line;
  line.add("ok ").add("bad", Tone::kBad).add(" dim", Tone::kDim);
  EXPECT_EQ(line.render(RenderStyle{}), "ok bad dim");
}

TEST(StyledLine, RendersColourCodes) {
  StyledLine line;
  line.add("ok ").add("bad", Tone::kBad);
  EXPECT_EQ(line.render(RenderStyle{true, true}), "ok \x1b[1;31mbad\x1b[0m");
}

TEST(StyledLine, AttributesWithoutColour) {
  // NO_COLOR in the live view: reverse video and bold stay, colours go.
  StyledLine line;
  line.add("SIM", Tone::kBanner).add(" warn", Tone::kWarn);
  EXPECT_EQ(line.render(RenderStyle{false, true}), "\x1b[1;7mSIM\x1b[0m warn");
}

TEST(StyledLine, CutsToWidthWithAnEllipsis) {
  StyledLine line;
  line.add("abc").add("defgh", Tone::kBad);
  EXPECT_EQ(line.render(RenderStyle{}, 8), "abcdefgh");  // fits exactly
  EXPECT_EQ(line.render(RenderStyle{}, 5), "abcd\xE2\x80\xA6");
  EXPECT_EQ(line.render(RenderStyle{true, true}, 5), "abc\x1b[1;31md\x1b[0m\xE2\x80\xA6");
  EXPECT_EQ(line.render(RenderStyle{}, 3), "ab\xE2\x80\xA6");
  EXPECT_EQ(line.render(RenderStyle{}, 0), "abcdefgh");  // 0: no limit
}

TEST(StyledLine, CutsWideCharactersWhole) {
  StyledLine line("\xE4\xB8\xAD\xE6\x96\x87\xE5\xAD\x97");  // three wide characters, 6 columns
  EXPECT_EQ(line.render(RenderStyle{}, 4), "\xE4\xB8\xAD\xE2\x80\xA6");
}

}  // namespace
}  // namespace gpumon::cli
