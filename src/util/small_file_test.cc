// SPDX-License-Identifier: MIT
// read_small_file: the bound, and what it refuses without blocking (a FIFO, a link when asked,
// another user's file when asked).
#include "util/small_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace gpumon::util {
namespace {

class SmallFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpumon-small-file-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::string dir_;
};

TEST_F(SmallFileTest, ReadsUpToTheBoundAndSaysWhenThereIsMore) {
  const std::string path = write("f", "0123456789");
  auto all = read_small_file(path, 10);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->text, "0123456789");
  EXPECT_FALSE(all->more);
  auto cut = read_small_file(path, 4);
  ASSERT_TRUE(cut);
  EXPECT_EQ(cut->text, "0123");
  EXPECT_TRUE(cut->more);
  EXPECT_FALSE(read_small_file(dir_ + "/missing", 10));
  EXPECT_FALSE(read_small_file(dir_, 10)) << "a directory is not a regular file";
}

TEST_F(SmallFileTest, AFifoIsRefusedWithoutBlocking) {
  const std::string path = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  EXPECT_FALSE(read_small_file(path, 10));  // a blocking open or read would hang the test
}

TEST_F(SmallFileTest, LinksAndOtherUsersFilesWhenTheRulesSaySo) {
  const std::string target = write("target", "x");
  const std::string link = dir_ + "/link";
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  EXPECT_TRUE(read_small_file(link, 10));
  EXPECT_FALSE(read_small_file(link, 10, {.follow_links = false}));
  EXPECT_TRUE(read_small_file(target, 10, {.owner_only = true}));
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
  ASSERT_EQ(::chown(target.c_str(), 12345, 12345), 0);
  EXPECT_TRUE(read_small_file(target, 10));
  EXPECT_FALSE(read_small_file(target, 10, {.owner_only = true}));
}

}  // namespace
}  // namespace gpumon::util
