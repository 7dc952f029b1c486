// SPDX-License-Identifier: MIT
#include "node/rank_memory_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "agent/socket_path.h"
#include "training/protocol.h"
#include "util/testing/temp_dir.h"

namespace gpumon::node {
namespace {

training::Step step_of(std::int64_t pid, std::int64_t n, std::int64_t received_ms,
                       std::optional<std::int64_t> allocated) {
  training::Step s;
  s.pid = pid, s.rank = 0, s.device = "cuda:0", s.step = n, s.received_ms = received_ms;
  s.allocated_bytes = allocated;
  s.reserved_bytes = allocated ? std::optional(*allocated * 2) : std::nullopt;
  return s;
}

std::optional<training::RankMemoryTable> read_table(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  std::string error;
  return training::parse_rank_memory(text.str(), error);
}

// Written at most once a second of the steps' arrival times (no wall clock read), at once when
// a process leaves, private to its owner, and removed on close.
TEST(RankMemoryFile, PublishesTheLatestStepOfEachProcess) {
  testing_util::TempDir dir;
  const std::string path = agent::rank_memory_path(dir.file("agent.sock"));
  EXPECT_EQ(path, dir.file("agent.sock.ranks.json"));
  RankMemoryFile f(path);
  f.on_rank_event(training::rank_event(1000, 11, 0, "hello",
                                       R"({"type":"hello","pid":11,"rank":0,"device":"cuda:0"})"));
  f.on_step(step_of(11, 1, 1000, 100));
  auto t = read_table(path);
  ASSERT_TRUE(t);
  ASSERT_EQ(t->ranks.size(), 1U);
  EXPECT_EQ(t->ranks[0].allocated_bytes, 100);
  ASSERT_TRUE(t->ranks[0].hello);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600U);

  f.on_step(step_of(11, 2, 1500, 200));  // within the second: not written yet
  EXPECT_EQ(read_table(path)->ranks[0].allocated_bytes, 100);
  f.on_step(step_of(11, 3, 2000, std::nullopt));  // no allocator fields this step: kept
  t = read_table(path);
  EXPECT_EQ(t->ranks[0].step, 3);
  EXPECT_EQ(t->ranks[0].allocated_bytes, 200);
  EXPECT_EQ(t->ranks[0].reserved_bytes, 400);

  f.on_step(step_of(12, 1, 2100, 5));
  f.on_rank_event(training::rank_event(2200, 11, 0, "bye", "{}"));  // at once
  t = read_table(path);
  ASSERT_EQ(t->ranks.size(), 1U);
  EXPECT_EQ(t->ranks[0].pid, 12);
  f.close();
  EXPECT_FALSE(read_table(path));
}

// The node places each rank on its GPU (its hello's bus id, else where NVML saw its pid) and
// publishes each GPU's latest utilization and temperature beside it.
TEST(RankMemoryFile, PlacesRanksAndCarriesTheGpusReadings) {
  testing_util::TempDir dir;
  RankMemoryFile f(agent::rank_memory_path(dir.file("agent.sock")));
  std::vector<DeviceStatic> devices(2);
  for (unsigned i = 0; i < 2; ++i) {
    devices[i].index = i;
    devices[i].pci_bus_id = "00000000:1" + std::to_string(8 + i) + ":00.0";
  }
  f.set_devices(devices);
  f.on_rank_event(training::rank_event(
      1000, 11, 0, "hello",
      R"({"type":"hello","pid":11,"rank":0,"device":"cuda:0","pci_bus_id":"00000000:19:00.0"})"));
  f.on_step(step_of(11, 1, 1000, 100));
  f.on_step(step_of(12, 1, 1000, 100));  // no hello with a bus id: NVML's list places it
  ProcessSnapshot list;
  list.gpu = 0;
  GpuProcess p;
  p.pid = 12;
  p.used_memory_bytes = std::uint64_t{1} << 30;
  list.processes = {p};
  f.on_processes(list);
  TickSample tick;
  tick.gpus.resize(2);
  tick.gpus[0].index = 0;
  tick.gpus[0].utilization_gpu_pct = 97U;
  tick.gpus[0].temperature_gpu_c = 61U;
  tick.gpus[1].index = 1;  // nothing read: unknown
  f.on_tick(tick);
  const auto t = f.table(2000);
  ASSERT_EQ(t.ranks.size(), 2U);
  EXPECT_EQ(t.ranks[0].gpu, 1U);
  EXPECT_EQ(t.ranks[1].gpu, 0U);
  ASSERT_EQ(t.gpus.size(), 2U);
  EXPECT_EQ(t.gpus[0].util_pct, 97U);
  EXPECT_EQ(t.gpus[0].temperature_c, 61U);
  EXPECT_FALSE(t.gpus[1].util_pct);
}

}  // namespace
}  // namespace gpumon::node
