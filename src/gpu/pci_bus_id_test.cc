// SPDX-License-Identifier: MIT
#include "gpu/pci_bus_id.h"

#include <gtest/gtest.h>

namespace gpumon {
namespace {

TEST(PciBusId, ParsesFullAndShortFormsInEitherCase) {
  const PciAddress a{0, 0x18, 0, 0};
  EXPECT_EQ(parse_pci_bus_id("00000000:18:00.0"), a);
  EXPECT_EQ(parse_pci_bus_id("0000:18:00.0"), a);
  EXPECT_EQ(parse_pci_bus_id("18:00.0"), a);
  EXPECT_EQ(parse_pci_bus_id("18:0.0"), a);
  EXPECT_EQ(parse_pci_bus_id("00000001:af:1f.7"), (PciAddress{1, 0xaf, 0x1f, 7}));
  for (const char* bad : {"", "18", "18:00", ":00.0", "18:.0", "18:00.", "118:00.0", "18:00.10",
                          "0:0:18:00.0", "000000000:18:00.0", "g8:00.0", "18:00.0 ", "-1:00.0"}) {
    EXPECT_FALSE(parse_pci_bus_id(bad)) << bad;
  }
}

TEST(PciBusId, FormatsAsNvmlDoes) {
  EXPECT_EQ(format_pci_bus_id({0, 0x1A, 0, 1}), "00000000:1A:00.1");
  EXPECT_EQ(format_pci_bus_id(*parse_pci_bus_id("0001:ba:1f.7")), "00000001:BA:1F.7");
}

TEST(PciBusId, SameDeviceWhateverTheDomainWidthOrCase) {
  EXPECT_TRUE(same_pci_bus_id("00000000:18:00.0", "0000:18:00.0"));
  EXPECT_TRUE(same_pci_bus_id("0000:1a:00.0", "00000000:1A:00.0"));
  EXPECT_FALSE(same_pci_bus_id("00000001:18:00.0", "0000:18:00.0"));
  EXPECT_FALSE(same_pci_bus_id("0000:18:00.0", "0000:18:00.1"));
  EXPECT_FALSE(same_pci_bus_id("", ""));
  EXPECT_FALSE(same_pci_bus_id("zz:18:00.0", "zz:18:00.0"));
}

}  // namespace
}  // namespace gpumon
