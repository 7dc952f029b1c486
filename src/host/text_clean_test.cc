// SPDX-License-Identifier: MIT
#include "host/text_clean.h"

#include <gtest/gtest.h>

namespace gpumon::host {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

TEST(CleanText, KeepsValidUtf8) {
  EXPECT_EQ(clean_text("python train.py"), "python train.py");
  EXPECT_EQ(clean_text("d\xC3\xA9j\xC3\xA0 \xE4\xB8\xAD \xF0\x9F\x98\x80"),
            "d\xC3\xA9j\xC3\xA0 \xE4\xB8\xAD \xF0\x9F\x98\x80");
}

TEST(CleanText, ReplacesInvalidSequences) {
  EXPECT_EQ(clean_text("a\xFF"
                       "b"),
            "a" + kFffd + "b");
  EXPECT_EQ(clean_text("\x80"), kFffd);                                      // stray continuation
  EXPECT_EQ(clean_text("\xC0\xAF"), kFffd + kFffd);                          // overlong '/'
  EXPECT_EQ(clean_text("\xE0\x80\xAF"), kFffd + kFffd + kFffd);              // overlong, 3 bytes
  EXPECT_EQ(clean_text("\xED\xA0\x80"), kFffd + kFffd + kFffd);              // surrogate D800
  EXPECT_EQ(clean_text("\xF4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd);  // > U+10FFFF
  EXPECT_EQ(clean_text("x\xE4\xB8"), "x" + kFffd + kFffd);                   // truncated at the end
}

TEST(CleanText, NeutralisesControlCharacters) {
  EXPECT_EQ(clean_text("\x1B[31mred"), kFffd + "[31mred");
  EXPECT_EQ(clean_text("a\tb\nc\rd"), "a b c d");
  EXPECT_EQ(clean_text(std::string("a\0b", 3)), "a" + kFffd + "b");
  EXPECT_EQ(clean_text("\x7F"), kFffd);
  EXPECT_EQ(clean_text("\xC2\x9B"
                       "2J"),
            kFffd + "2J");                        // C1 CSI
  EXPECT_EQ(clean_text("\xC2\xA0"), "\xC2\xA0");  // NBSP is printable
}

TEST(CommandLineFromProc, JoinsArgumentsWithSpaces) {
  EXPECT_EQ(command_line_from_proc(std::string("python\0train.py\0--lr\0"
                                               "0.1\0",
                                               24),
                                   4096),
            "python train.py --lr 0.1");
  EXPECT_EQ(command_line_from_proc(std::string("a\0\0b\0\0\0", 7), 4096), "a  b");
  EXPECT_EQ(command_line_from_proc("", 4096), "");
  EXPECT_EQ(command_line_from_proc(std::string("\0\0", 2), 4096), "");
  // setproctitle() style: one string with spaces and no NUL at all.
  EXPECT_EQ(command_line_from_proc("worker: idle", 4096), "worker: idle");
}

TEST(CommandLineFromProc, BoundsTheLengthOnACodePoint) {
  EXPECT_EQ(command_line_from_proc("abcdef", 4), "abcd\xE2\x80\xA6");
  EXPECT_EQ(command_line_from_proc("abcd", 4), "abcd");
  // "é" is two bytes: a 2-byte budget after "a" cannot split it.
  EXPECT_EQ(command_line_from_proc("a\xC3\xA9z", 2), "a\xE2\x80\xA6");
}

TEST(Utf8Prefix, NeverSplitsACodePoint) {
  const std::string s = "\xE4\xB8\xAD\xE6\x96\x87";  // two 3-byte characters
  EXPECT_EQ(utf8_prefix(s, 6), s);
  EXPECT_EQ(utf8_prefix(s, 5), "\xE4\xB8\xAD");
  EXPECT_EQ(utf8_prefix(s, 3), "\xE4\xB8\xAD");
  EXPECT_EQ(utf8_prefix(s, 2), "");
  EXPECT_EQ(utf8_prefix(s, 0), "");
}

}  // namespace
}  // namespace gpumon::host
