// SPDX-License-Identifier: MIT
#include "query/device_select.h"

#include <gtest/gtest.h>

#include "query/test_backend.h"

namespace gpumon::query {
namespace {

std::vector<DeviceStatic> three_gpus() {
  std::vector<DeviceStatic> d(3, testing::h200_static());
  for (unsigned i = 0; i < 3; ++i) {
    d[i].index = i;
    d[i].uuid = "GPU-aaaaaaaa-0000-4000-8000-00000000000" + std::to_string(i);
    d[i].serial = "16500000000" + std::to_string(i);
  }
  d[0].pci_bus_id = std::string("00000000:18:00.0");
  d[1].pci_bus_id = std::string("00000000:3B:00.0");
  d[2].pci_bus_id = std::string("00000001:AF:1F.7");
  return d;
}

TEST(MatchDevice, EveryIdForm) {
  const auto d = three_gpus();
  EXPECT_EQ(match_device("1", d), 1U);
  EXPECT_EQ(match_device("GPU-aaaaaaaa-0000-4000-8000-000000000002", d), 2U);
  EXPECT_EQ(match_device("gpu-AAAAAAAA-0000-4000-8000-000000000002", d), 2U);
  EXPECT_EQ(match_device("00000000:3B:00.0", d), 1U);
  EXPECT_EQ(match_device("3b:00.0", d), 1U);
  EXPECT_EQ(match_device("1:af:1f.7", d), 2U);
  EXPECT_EQ(match_device("AF:1F.7", d), std::nullopt);  // domain 0, GPU 2 is in domain 1
  EXPECT_EQ(match_device("165000000000", d), 0U);       // digits beyond the index: a serial
  EXPECT_EQ(match_device("3", d), std::nullopt);
  EXPECT_EQ(match_device("abc", d), std::nullopt);
  EXPECT_EQ(match_device("GPU-aaaaaaaa", d), std::nullopt);  // no prefix matching
  EXPECT_EQ(match_device("99999999999999999999", d), std::nullopt);
}

TEST(SelectDevices, SortsAndDeduplicates) {
  const auto d = three_gpus();
  EXPECT_EQ(*select_devices("0,0", d), (std::vector<unsigned>{0}));
  EXPECT_EQ(*select_devices("2, 0 ,3b:00.0", d), (std::vector<unsigned>{0, 1, 2}));
  EXPECT_EQ(*select_devices("1,GPU-aaaaaaaa-0000-4000-8000-000000000001", d),
            (std::vector<unsigned>{1}));
}

TEST(SelectDevices, Errors) {
  const auto d = three_gpus();
  auto none = select_devices("0,7", d);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().exit_code, 6);
  EXPECT_EQ(none.error().message.rfind("No devices were found\n", 0), 0U);
  EXPECT_NE(none.error().message.find("\"7\""), std::string::npos);
  auto empty = select_devices(" , ", d);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().exit_code, 2);
}

TEST(SelectDevices, SkipsGpusWhoseIdsCouldNotBeRead) {
  auto d = three_gpus();
  d[0].uuid = Reading<std::string>::missing(Missing::kGpuLost);
  d[0].pci_bus_id = Reading<std::string>::missing(Missing::kGpuLost);
  d[0].serial = Reading<std::string>::missing(Missing::kGpuLost);
  EXPECT_EQ(*select_devices("0", d), (std::vector<unsigned>{0}));  // the index still works
  EXPECT_FALSE(select_devices("18:00.0", d));
}

}  // namespace
}  // namespace gpumon::query
