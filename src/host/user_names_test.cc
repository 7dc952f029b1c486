// SPDX-License-Identifier: MIT
#include "host/user_names.h"

#include <gtest/gtest.h>

namespace gpumon::host {
namespace {

TEST(UserNames, LooksUpOnceAndCaches) {
  int calls = 0;
  UserNames names([&](unsigned uid) -> std::optional<std::string> {
    ++calls;
    if (uid == 1000) return "alice";
    return std::nullopt;
  });
  EXPECT_EQ(names.name_of(1000), "alice");
  EXPECT_EQ(names.name_of(1000), "alice");
  EXPECT_EQ(calls, 1);
}

TEST(UserNames, NumericWhenThereIsNoEntry) {
  UserNames names([](unsigned) -> std::optional<std::string> { return std::nullopt; });
  EXPECT_EQ(names.name_of(4000000), "4000000");
}

TEST(UserNames, NamesAreMadePrintable) {
  UserNames names([](unsigned) -> std::optional<std::string> { return "ev\x1Bil"; });
  EXPECT_EQ(names.name_of(1), "ev\xEF\xBF\xBDil");
}

TEST(UserNames, SystemLookupFindsRoot) {
  // uid 0 is "root" on every Linux system gpumon supports, containers included.
  EXPECT_EQ(UserNames::system_lookup(0).value_or(""), "root");
  // An uid far above any allocated range has no entry.
  EXPECT_FALSE(UserNames::system_lookup(3999999999U).has_value());
}

}  // namespace
}  // namespace gpumon::host
