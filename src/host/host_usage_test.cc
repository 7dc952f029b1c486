// SPDX-License-Identifier: MIT
#include "host/host_usage.h"

#include <gtest/gtest.h>

#include <map>

namespace gpumon::host {
namespace {

class Files : public ProcFiles {
 public:
  std::map<std::string, std::string> text;
  FileText read(std::string_view relative, std::size_t) const override {
    const auto it = text.find(std::string(relative));
    return it == text.end() ? FileText{"", ENOENT} : FileText{it->second, 0};
  }
  LinkTargets read_links(std::string_view, std::size_t) const override {
    return {{}, false, ENOENT};
  }
  int probe(std::string_view) const override { return ENOENT; }
};

TEST(HostUsage, CpuShareBetweenReadsAndMemoryInUse) {
  Files f;
  f.text["stat"] = "cpu  100 0 100 800 0 0 0 0\ncpu0 1 1 1 1\ncpu1 1 1 1 1\n";
  f.text["meminfo"] = "MemTotal:  1000 kB\nMemFree: 100 kB\nMemAvailable:  250 kB\n";
  HostUsageReader reader(f);
  HostUsage first = reader.read();
  EXPECT_EQ(first.cpu_pct.why(), Missing::kNotAvailable) << "one read gives no share";
  EXPECT_EQ(first.cpus, 2U);
  EXPECT_EQ(first.mem_total_bytes.value(), 1000U * 1024);
  EXPECT_EQ(first.mem_used_bytes.value(), 750U * 1024);
  // 300 more busy ticks of 400: 75 %.
  f.text["stat"] = "cpu  300 0 200 900 0 0 0 0\ncpu0 1 1 1 1\ncpu1 1 1 1 1\n";
  EXPECT_DOUBLE_EQ(reader.read().cpu_pct.value(), 75.0);
}

TEST(HostUsage, UnreadableIsMissingNeverZero) {
  Files f;
  HostUsageReader reader(f);
  const HostUsage u = reader.read();
  EXPECT_FALSE(u.cpu_pct);
  EXPECT_FALSE(u.mem_used_bytes);
  f.text["stat"] = "cpu  100 0 100 800 0 0 0 0\n";
  reader.read();
  f.text["stat"] = "cpu  50 0 100 800 0 0 0 0\n";  // went backwards: not a share
  EXPECT_FALSE(reader.read().cpu_pct);
}

}  // namespace
}  // namespace gpumon::host
