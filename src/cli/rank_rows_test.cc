// SPDX-License-Identifier: MIT
// The ranks' PyTorch memory in the snapshot and the live view: placed on their GPU by the one
// rank -> GPU mapping, dead processes left out, and shown as seed 000's table.
#include "cli/rank_rows.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/rank_table.h"
#include "cli/snapshot_json.h"
#include "cli/snapshot_text.h"
#include "cli/test_snapshots.h"
#include "training/protocol.h"

namespace gpumon::cli {
namespace {

using namespace testing;

constexpr std::int64_t kNowMs = 1764701212153;

Snapshot two_gpus() {
  Snapshot snap = empty_snapshot();
  for (unsigned i = 0; i < 2; ++i) {
    snap.gpus.push_back(healthy_gpu(i));
    snap.gpus.back().info.pci_bus_id = "00000000:1" + std::to_string(8 + i) + ":00.0";
  }
  return snap;
}

training::RankMemory rank_on(std::int64_t pid, std::int64_t rank, const std::string& bus_id) {
  training::RankMemory r;
  r.pid = pid, r.rank = rank, r.device = "cuda:0", r.step = 1200, r.time_ms = kNowMs - 500;
  r.allocated_bytes = std::int64_t{30} << 30;
  r.reserved_bytes = std::int64_t{34} << 30;
  r.step_s = 0.2125, r.data_wait_s = pid == 21 ? 0.05 : 0.0004;
  r.hello =
      training::rank_event(0, pid, rank, "hello",
                           R"({"type":"hello","device":"cuda:0","pci_bus_id":")" + bus_id + R"("})")
          .hello;
  return r;
}

TEST(RankRows, EachRankOnItsGpuAndTheDeadLeftOut) {
  Snapshot snap = two_gpus();
  training::RankMemoryTable table;
  table.ranks = {rank_on(21, 1, "00000000:19:00.0"), rank_on(20, 0, "00000000:18:00.0"),
                 rank_on(99, 2, "00000000:18:00.0")};
  training::RankMemory cpu;  // named no GPU: unmapped, listed last
  cpu.pid = 30, cpu.device = "cpu", cpu.time_ms = kNowMs - 20000;
  table.ranks.push_back(cpu);
  set_ranks(snap, table, kNowMs, [](std::int64_t pid) { return pid != 99; });
  ASSERT_EQ(snap.ranks.size(), 3U);
  EXPECT_EQ(snap.ranks[0].pid, 20);
  EXPECT_EQ(snap.ranks[0].gpu, 0U);
  EXPECT_EQ(snap.ranks[1].pid, 21);
  EXPECT_EQ(snap.ranks[1].gpu, 1U);
  EXPECT_EQ(snap.ranks[2].pid, 30);
  EXPECT_FALSE(snap.ranks[2].gpu);
  EXPECT_DOUBLE_EQ(snap.ranks[0].age_s, 0.5);

  const auto lines = rank_table(snap);
  ASSERT_EQ(lines.size(), 5U);
  const RenderStyle plain{false, false};
  EXPECT_EQ(lines[0].render(plain, 200), "Training ranks (attached to gpumon)");
  EXPECT_EQ(lines[1].render(plain, 200),
            "GPU  Rank      PID      Step  Step time  Data wait   Allocated   Reserved  Updated");
  EXPECT_EQ(lines[2].render(plain, 200),
            "  0     0       20      1200   212.5 ms     0.4 ms    30.0 GiB   34.0 GiB  0.5 s ago");
  EXPECT_EQ(
      lines[4].render(plain, 200),
      "  -     -       30         0          -          -           -          -  20.0 s ago");
  // Rank 1 waits 50 of its 212 ms for data: its wait is coloured.
  EXPECT_NE(lines[3].render(RenderStyle{true, true}, 200).find("\x1b[33m50.0 ms"),
            std::string::npos)
      << lines[3].render(RenderStyle{true, true}, 200);
  TextOptions text;
  EXPECT_NE(format_snapshot_text(snap, text).find("Training ranks"), std::string::npos);

  const auto json = nlohmann::json::parse(format_snapshot_json(snap, JsonOptions{}));
  ASSERT_EQ(json["ranks"].size(), 3U);
  EXPECT_EQ(json["ranks"][1]["gpu"], 1);
  EXPECT_EQ(json["ranks"][1]["torch_allocated_bytes"], std::int64_t{30} << 30);
  EXPECT_TRUE(json["ranks"][2]["gpu"].is_null());
  EXPECT_TRUE(json["ranks"][2]["torch_reserved_bytes"].is_null());
  EXPECT_DOUBLE_EQ(json["ranks"][1]["step_s"].get<double>(), 0.2125);
  EXPECT_DOUBLE_EQ(json["ranks"][1]["data_wait_s"].get<double>(), 0.05);
  EXPECT_TRUE(json["ranks"][2]["step_s"].is_null());
}

TEST(RankRows, NoTableNoRowsAndNoSection) {
  Snapshot snap = two_gpus();
  add_ranks(snap, "/nonexistent/gpumon/agent.sock.ranks.json");
  EXPECT_TRUE(snap.ranks.empty());
  EXPECT_TRUE(rank_table(snap).empty());
  EXPECT_EQ(format_snapshot_text(snap, TextOptions{}).find("Training ranks"), std::string::npos);
  EXPECT_EQ(rank_memory_file(std::string("/run/x/a.sock")), "/run/x/a.sock.ranks.json");
}

}  // namespace
}  // namespace gpumon::cli
