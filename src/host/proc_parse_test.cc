// SPDX-License-Identifier: MIT
#include "host/proc_parse.h"

#include <gtest/gtest.h>

namespace gpumon::host {
namespace {

constexpr const char* kTail =
    " 1 4242 4242 0 -1 4194304 1000 0 0 0 1500 500 0 0 20 0 12 0 100000 9000000000 262144 "
    "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n";

TEST(ParseStat, ReadsTheFieldsAfterTheName) {
  const auto st = parse_stat(std::string("4242 (python3) R") + kTail);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->comm, "python3");
  EXPECT_EQ(st->state, 'R');
  EXPECT_EQ(st->ppid, 1U);
  EXPECT_EQ(st->utime_ticks, 1500U);
  EXPECT_EQ(st->stime_ticks, 500U);
  EXPECT_EQ(st->start_ticks, 100000U);
  EXPECT_EQ(st->rss_pages, 262144U);
}

TEST(ParseCpuTimes, BusyIsAllButIdleAndIowait) {
  const auto t = parse_cpu_times(
      "cpu  100 5 50 1000 20 3 2 1 7 0\ncpu0 50 2 25 500 10 1 1 0 0 0\n"
      "cpu1 50 3 25 500 10 2 1 1 0 0\nintr 1 2 3\nbtime 1700000000\n");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->total, 100U + 5 + 50 + 1000 + 20 + 3 + 2 + 1);
  EXPECT_EQ(t->busy, 100U + 5 + 50 + 3 + 2 + 1);
  EXPECT_EQ(t->cpus, 2U);
  EXPECT_FALSE(parse_cpu_times("cpu  1 2 x 4\n").has_value());
  EXPECT_FALSE(parse_cpu_times("intr 1\n").has_value());
}

TEST(ParseStat, NameWithSpacesAndParenthesesSplitsAtTheLastParenthesis) {
  const auto st = parse_stat(std::string("7 (a) b (c)) S") + kTail);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->comm, "a) b (c)");
  EXPECT_EQ(st->state, 'S');
  EXPECT_EQ(st->utime_ticks, 1500U);
}

TEST(ParseStat, NameThatLooksLikeFields) {
  // A name crafted to fool a parser that splits on the first ')'.
  const auto st = parse_stat(std::string("7 (x) R 1 2 3 4 5 6 7 8 9 999 999) S") + kTail);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->comm, "x) R 1 2 3 4 5 6 7 8 9 999 999");
  EXPECT_EQ(st->utime_ticks, 1500U);
}

TEST(ParseStat, EmptyName) {
  const auto st = parse_stat(std::string("7 () S") + kTail);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->comm, "");
}

TEST(ParseStat, RejectsMalformedInput) {
  EXPECT_FALSE(parse_stat("").has_value());
  EXPECT_FALSE(parse_stat("4246 (broken S 1 2 3\n").has_value());
  EXPECT_FALSE(parse_stat("4246 )x( S 1 2 3\n").has_value());
  EXPECT_FALSE(parse_stat("4246 (short) S 1 2 3\n").has_value());
  EXPECT_FALSE(parse_stat(std::string("1 (x) RR") + kTail).has_value());
  // A field that is not a number where utime should be.
  EXPECT_FALSE(parse_stat("1 (x) R 1 4242 4242 0 -1 4194304 1000 0 0 0 abc 500 0 0 20 0 12 0 "
                          "100000 9000000000 262144\n")
                   .has_value());
  // Negative rss is corrupt.
  EXPECT_FALSE(parse_stat("1 (x) R 1 4242 4242 0 -1 4194304 1000 0 0 0 1 500 0 0 20 0 12 0 "
                          "100000 9000000000 -5\n")
                   .has_value());
}

TEST(ParseStatus, ReadsRealAndEffectiveUid) {
  const auto s = parse_status("Name:\tpython3\nUid:\t1000\t1001\t1001\t1001\nGid:\t5\t5\t5\t5\n");
  EXPECT_EQ(s.real_uid, 1000U);
  EXPECT_EQ(s.effective_uid, 1001U);
}

TEST(ParseStatus, MissingOrBrokenUidLine) {
  EXPECT_FALSE(parse_status("Name:\tx\n").effective_uid.has_value());
  EXPECT_FALSE(parse_status("Uid:\t12\n").effective_uid.has_value());
  EXPECT_FALSE(parse_status("Uid:\tx\ty\n").effective_uid.has_value());
  EXPECT_FALSE(parse_status("").real_uid.has_value());
}

TEST(ParseUptime, FirstNumber) {
  EXPECT_DOUBLE_EQ(parse_uptime_seconds("1100.25 2000.00\n").value(), 1100.25);
  EXPECT_FALSE(parse_uptime_seconds("").has_value());
  EXPECT_FALSE(parse_uptime_seconds("abc 1\n").has_value());
  EXPECT_FALSE(parse_uptime_seconds("-5 1\n").has_value());
}

TEST(ParseBootTime, FindsTheBtimeLine) {
  EXPECT_EQ(parse_boot_time("cpu 1 2 3\nintr 1 2\nbtime 1700000000\nprocesses 3\n"), 1700000000);
  EXPECT_FALSE(parse_boot_time("cpu 1 2 3\n").has_value());
  EXPECT_FALSE(parse_boot_time("btime soon\n").has_value());
  EXPECT_FALSE(parse_boot_time("xbtime 5\n").has_value());
}

TEST(ProcHidesOtherUsers, ReadsHidepidFromTheProcMount) {
  EXPECT_FALSE(proc_hides_other_users("22 1 0:21 / /proc rw,nosuid shared:12 - proc proc rw\n"));
  EXPECT_TRUE(proc_hides_other_users("22 1 0:21 / /proc rw shared:12 - proc proc rw,hidepid=2\n"));
  EXPECT_TRUE(
      proc_hides_other_users("22 1 0:21 / /proc rw - proc proc rw,hidepid=invisible,gid=5\n"));
  EXPECT_TRUE(proc_hides_other_users("22 1 0:21 / /proc rw - proc proc rw,hidepid=ptraceable\n"));
  // hidepid=1 keeps the directories: reads fail with EACCES instead.
  EXPECT_FALSE(proc_hides_other_users("22 1 0:21 / /proc rw - proc proc rw,hidepid=1\n"));
  // Another mount point, or another file system type, does not count.
  EXPECT_FALSE(proc_hides_other_users("22 1 0:21 / /host/proc rw - proc proc rw,hidepid=2\n"));
  EXPECT_FALSE(proc_hides_other_users("22 1 0:21 / /proc rw - tmpfs tmpfs rw,hidepid=2\n"));
  // The last mount on /proc wins (a container remounting it).
  EXPECT_FALSE(proc_hides_other_users(
      "22 1 0:21 / /proc rw - proc proc rw,hidepid=2\n30 1 0:40 / /proc rw - proc proc rw\n"));
  EXPECT_FALSE(proc_hides_other_users("garbage\n\n - - -\n"));
}

}  // namespace
}  // namespace gpumon::host
