// SPDX-License-Identifier: MIT
#include "util/plural.h"

#include <gtest/gtest.h>

namespace gpumon::util {
namespace {

TEST(CountOf, OneIsSingularEverythingElsePlural) {
  EXPECT_EQ(count_of(1, "tick"), "1 tick");
  EXPECT_EQ(count_of(0, "tick"), "0 ticks");
  EXPECT_EQ(count_of(2, "GPU"), "2 GPUs");
  EXPECT_EQ(count_of(3, "process", "processes"), "3 processes");
  EXPECT_EQ(count_of(1, "process", "processes"), "1 process");
}

}  // namespace
}  // namespace gpumon::util
