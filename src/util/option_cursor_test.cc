// SPDX-License-Identifier: MIT
#include "util/option_cursor.h"

#include <gtest/gtest.h>

namespace gpumon::util {
namespace {

TEST(OptionCursor, SplitsInlineValuesAndTakesTheNextArgument) {
  const std::vector<std::string> args{"run.gpumon", "--format=csv", "-o",    "out.html",
                                      "--gpu",      "--x=",         "--last"};
  OptionCursor c(args);
  ASSERT_TRUE(c.next());
  EXPECT_EQ(c.name(), "run.gpumon");
  EXPECT_FALSE(c.has_inline_value());
  ASSERT_TRUE(c.next());
  EXPECT_EQ(c.name(), "--format");
  EXPECT_EQ(c.arg(), "--format=csv");
  EXPECT_TRUE(c.has_inline_value());
  EXPECT_EQ(c.value(), "csv");
  ASSERT_TRUE(c.next());
  EXPECT_EQ(c.name(), "-o");         // single-dash options never split on '='
  EXPECT_EQ(c.value(), "out.html");  // consumed: the next call moves past it
  ASSERT_TRUE(c.next());
  EXPECT_EQ(c.name(), "--gpu");
  EXPECT_EQ(c.value(), "--x=");  // a value is whatever follows, as the commands expect
  ASSERT_TRUE(c.next());
  EXPECT_EQ(c.name(), "--last");
  EXPECT_EQ(c.value(), std::nullopt);  // nothing left to take
  EXPECT_FALSE(c.next());
}

TEST(OptionCursor, EmptyInlineValueAndNoArguments) {
  const std::vector<std::string> args{"--listen="};
  OptionCursor c(args);
  ASSERT_TRUE(c.next());
  EXPECT_TRUE(c.has_inline_value());
  EXPECT_EQ(c.value(), "");
  EXPECT_FALSE(c.next());
  const std::vector<std::string> none;
  OptionCursor empty(none);
  EXPECT_FALSE(empty.next());
}

}  // namespace
}  // namespace gpumon::util
