// SPDX-License-Identifier: MIT
#include "host/host_memory_parse.h"

#include <gtest/gtest.h>

namespace gpumon::host {
namespace {

// Captured on Debian 12 (Linux 6.1): /proc/self/smaps_rollup, the head of /proc/meminfo.
constexpr const char* kRollup =
    "55fac93fc000-7fffe6c7a000 ---p 00000000 00:00 0                          [rollup]\n"
    "Rss:                1620 kB\n"
    "Pss:                 315 kB\n"
    "Pss_Dirty:           116 kB\n"
    "Pss_Anon:            116 kB\n"
    "Shared_Clean:       1464 kB\n"
    "Swap:                  0 kB\n";
constexpr const char* kMeminfo =
    "MemTotal:       24683548 kB\n"
    "MemFree:        22316368 kB\n"
    "MemAvailable:   23761552 kB\n"
    "Buffers:           31648 kB\n";

TEST(ParseKbField, ReadsTheKeyNotItsPrefixes) {
  EXPECT_EQ(parse_kb_field(kRollup, "Pss"), 315 * 1024);  // not Pss_Dirty
  EXPECT_EQ(parse_kb_field(kRollup, "Rss"), 1620 * 1024);
  EXPECT_EQ(parse_kb_field(kRollup, "Swap"), 0);  // a real 0 is 0
  EXPECT_EQ(parse_kb_field(kMeminfo, "MemAvailable"), std::int64_t{23761552} * 1024);
  EXPECT_EQ(parse_kb_field(kMeminfo, "MemTotal"), std::int64_t{24683548} * 1024);
}

TEST(ParseKbField, MissingOrMalformedIsMissing) {
  EXPECT_FALSE(parse_kb_field(kMeminfo, "MemAvail").has_value());
  EXPECT_FALSE(parse_kb_field("", "Pss").has_value());
  EXPECT_FALSE(parse_kb_field("Pss: 12\n", "Pss").has_value());
  EXPECT_FALSE(parse_kb_field("Pss: x kB\n", "Pss").has_value());
  EXPECT_FALSE(parse_kb_field("Pss: -5 kB\n", "Pss").has_value());
  EXPECT_FALSE(parse_kb_field("Pss: 99999999999999999999 kB\n", "Pss").has_value());
}

TEST(ParseStatm, ResidentIsTheSecondField) {
  EXPECT_EQ(parse_statm_resident_pages("765 426 398 5 0 123 0\n"), 426);
  EXPECT_FALSE(parse_statm_resident_pages("765").has_value());
  EXPECT_FALSE(parse_statm_resident_pages("765 x 1").has_value());
  EXPECT_FALSE(parse_statm_resident_pages("").has_value());
}

TEST(ParseChildren, ListsPidsAndSkipsJunk) {
  EXPECT_EQ(parse_children("123 456 "), (std::vector<std::int64_t>{123, 456}));
  EXPECT_EQ(parse_children("7\n"), (std::vector<std::int64_t>{7}));
  EXPECT_EQ(parse_children("a 0 -3 9"), (std::vector<std::int64_t>{9}));
  EXPECT_TRUE(parse_children("").empty());
}

TEST(ParseCgroup, UnlimitedIsNoLimit) {
  EXPECT_FALSE(parse_cgroup_limit("max\n").has_value());                  // v2
  EXPECT_FALSE(parse_cgroup_limit("9223372036854771712\n").has_value());  // v1
  EXPECT_EQ(parse_cgroup_limit("4294967296\n"), std::int64_t{4294967296});
  EXPECT_FALSE(parse_cgroup_limit("").has_value());
  EXPECT_EQ(parse_cgroup_usage("1994137600\n"), 1994137600);
  EXPECT_FALSE(parse_cgroup_usage("lots").has_value());
}

}  // namespace
}  // namespace gpumon::host
