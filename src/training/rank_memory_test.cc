// SPDX-License-Identifier: MIT
#include "training/rank_memory.h"

#include <gtest/gtest.h>

#include "training/protocol.h"

namespace gpumon::training {
namespace {

TEST(RankMemory, RoundTripsWithTheHelloAndUnknownsKeptUnknown) {
  RankMemoryTable t;
  t.written_ms = 1700000000123;
  RankMemory a;
  a.pid = 4242;
  a.rank = 1;
  a.device = "cuda:1";
  a.hello = rank_event(0, 4242, 1, "hello",
                       R"({"type":"hello","pid":4242,"rank":1,"device":"cuda:1",)"
                       R"("pci_bus_id":"00000000:19:00.0"})")
                .hello;
  ASSERT_TRUE(a.hello);
  a.gpu = 1U;
  a.step = 1200;
  a.time_ms = 1700000000100;
  a.allocated_bytes = std::int64_t{30} << 30;
  a.reserved_bytes = std::int64_t{34} << 30;
  a.step_s = 0.2125, a.data_wait_s = 0.0;
  RankMemory b;  // a CPU process: no allocator, no hello yet
  b.pid = 77;
  t.ranks = {a, b};
  t.gpus = {{0, 97U, 61U}, {1, std::nullopt, 63U}};
  std::string error;
  const auto back = parse_rank_memory(rank_memory_json(t), error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->written_ms, t.written_ms);
  ASSERT_EQ(back->ranks.size(), 2U);
  const RankMemory& r = back->ranks[0];
  EXPECT_EQ(r.pid, 4242);
  EXPECT_EQ(r.rank, 1);
  EXPECT_EQ(r.device, "cuda:1");
  EXPECT_EQ(r.gpu, 1U);
  EXPECT_EQ(r.step, 1200);
  ASSERT_EQ(back->gpus.size(), 2U);
  EXPECT_EQ(back->gpus[0].util_pct, 97U);
  EXPECT_EQ(back->gpus[0].temperature_c, 61U);
  EXPECT_FALSE(back->gpus[1].util_pct) << "unknown stays unknown, never 0";
  EXPECT_FALSE(back->ranks[1].gpu);
  EXPECT_EQ(r.allocated_bytes, std::int64_t{30} << 30);
  EXPECT_EQ(r.reserved_bytes, std::int64_t{34} << 30);
  ASSERT_TRUE(r.hello);
  EXPECT_EQ(r.hello->pci_bus_id, "00000000:19:00.0");
  EXPECT_FALSE(back->ranks[1].rank);
  EXPECT_FALSE(back->ranks[1].allocated_bytes);
  EXPECT_EQ(r.step_s, 0.2125);
  EXPECT_EQ(r.data_wait_s, 0.0) << "no wait is 0, not unknown";
  EXPECT_FALSE(back->ranks[1].step_s);
  EXPECT_FALSE(back->ranks[1].hello);
}

TEST(RankMemory, RefusesWhatIsNotATableAndSkipsBadRows) {
  std::string error;
  for (const char* bad : {"", "[]", "{}", R"({"ranks":{}})", R"({"version":2,"ranks":[]})"}) {
    EXPECT_FALSE(parse_rank_memory(bad, error)) << bad;
    EXPECT_FALSE(error.empty());
  }
  const auto t = parse_rank_memory(
      R"({"version":1,"ranks":[1,{"pid":-3},{"pid":"x"},{"pid":5,"allocated_bytes":"big",)"
      R"("step_s":-1,"data_wait_s":"1",)"
      R"("hello":{"type":"hello","rank":"zero"}}]})",
      error);
  ASSERT_TRUE(t) << error;
  ASSERT_EQ(t->ranks.size(), 1U);
  EXPECT_EQ(t->ranks[0].pid, 5);
  EXPECT_FALSE(t->ranks[0].allocated_bytes) << "a wrong type is unknown, not 0";
  EXPECT_FALSE(t->ranks[0].step_s) << "a negative step time is corrupt";
  EXPECT_FALSE(t->ranks[0].data_wait_s);
  EXPECT_FALSE(t->ranks[0].hello) << "a hello that does not parse is left out";
}

}  // namespace
}  // namespace gpumon::training
