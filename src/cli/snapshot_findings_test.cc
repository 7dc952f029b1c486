// SPDX-License-Identifier: MIT
#include "cli/snapshot_findings.h"

#include <gtest/gtest.h>

#include "cli/snapshot_json.h"
#include "cli/snapshot_text.h"
#include "cli/test_snapshots.h"

namespace gpumon::cli {
namespace {

using namespace testing;

TEST(SnapshotFindings, ALostGpuIsOneFindingAndHealthyOnesNone) {
  Snapshot s = empty_snapshot();
  s.gpus = {healthy_gpu(0), healthy_gpu(1)};
  EXPECT_TRUE(snapshot_findings(s).empty()) << "one healthy reading supports no finding";
  s.gpus = {healthy_gpu(0), lost_gpu(1)};
  const auto f = snapshot_findings(s);
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].id, "gpu_lost");
  EXPECT_EQ(f[0].severity, "critical");
  EXPECT_EQ(f[0].gpus, std::vector<unsigned>{1});
  EXPECT_FALSE(f[0].summary.empty());
}

TEST(SnapshotFindings, AGpuThatCannotBeOpenedIsNotLost) {
  Snapshot s = empty_snapshot();
  s.gpus = {healthy_gpu(0), unopened_gpu(1)};
  for (const auto& f : snapshot_findings(s)) EXPECT_NE(f.id, "gpu_lost");
}

TEST(SnapshotFindings, ShownAfterTheProcessesAndInTheJson) {
  Snapshot s = empty_snapshot();
  s.gpus = {healthy_gpu(0), lost_gpu(1)};
  EXPECT_EQ(format_snapshot_text(s, TextOptions{}).find("Findings"), std::string::npos)
      << "no section without findings";
  EXPECT_EQ(snapshot_to_json(s, JsonOptions{})["findings"], nlohmann::json::array());
  s.findings = {{"gpu_lost", "critical", {1}, "GPU 1 was lost"}};
  const std::string text = format_snapshot_text(s, TextOptions{});
  EXPECT_NE(text.find("\nFindings\n  critical  gpu_lost: GPU 1 was lost\n"), std::string::npos)
      << text;
  const auto j = snapshot_to_json(s, JsonOptions{})["findings"];
  ASSERT_EQ(j.size(), 1U);
  EXPECT_EQ(j[0]["id"], "gpu_lost");
  EXPECT_EQ(j[0]["severity"], "critical");
  EXPECT_EQ(j[0]["gpus"], nlohmann::json::array({1}));
  EXPECT_EQ(j[0]["summary"], "GPU 1 was lost");
}

}  // namespace
}  // namespace gpumon::cli
