// SPDX-License-Identifier: MIT
// Scenario keys for GPM support and ECC events.
#include <gtest/gtest.h>

#include "fake_nvml/scenario_parser.h"

namespace gpumon::fake {
namespace {

TEST(ScenarioPerfKeys, GpmDefaultsFollowTheNameAndEccEventsMergeInTimeOrder) {
  ParseResult r = parse_scenario(R"({"devices": [
      {"name": "NVIDIA H200", "xid_events": [{"at_s": 2, "xid": 13}],
       "ecc_events": [{"at_s": 1, "type": "double_bit"}, {"at_s": 3, "type": "single_bit"}]},
      {"name": "NVIDIA A100-SXM4-80GB"},
      {"name": "NVIDIA H100 80GB HBM3", "gpm_supported": false}]})",
                                 "t");
  ASSERT_TRUE(r.scenario) << r.error;
  const auto& d = r.scenario->devices;
  EXPECT_TRUE(d[0].gpm_supported);
  EXPECT_FALSE(d[1].gpm_supported);
  EXPECT_FALSE(d[2].gpm_supported);
  ASSERT_EQ(d[0].xid_events.size(), 3U);
  EXPECT_EQ(d[0].xid_events[0].event_type, 0x2U);
  EXPECT_EQ(d[0].xid_events[1].xid, 13U);
  EXPECT_EQ(d[0].xid_events[1].event_type, 0x8U);
  EXPECT_EQ(d[0].xid_events[2].event_type, 0x1U);
  const ParseResult bad =
      parse_scenario(R"({"devices": [{"ecc_events": [{"at_s": 1, "type": "triple"}]}]})", "t");
  EXPECT_EQ(bad.error, "devices[0].ecc_events[0].type: must be \"single_bit\" or \"double_bit\"");
}

}  // namespace
}  // namespace gpumon::fake
