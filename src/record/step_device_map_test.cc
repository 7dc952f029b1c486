// SPDX-License-Identifier: MIT
// map_step_device: every rule, and every case where a guess would be wrong stays unmapped.
#include "record/step_device_map.h"

#include <gtest/gtest.h>

namespace gpumon::record {
namespace {

RecordedDevice gpu(unsigned index, std::optional<std::string> bus) {
  RecordedDevice d;
  d.index = index;
  d.pci_bus_id = std::move(bus);
  return d;
}

// NVML order on purpose not PCI order, so rule 3 must sort.
std::vector<RecordedDevice> four_gpus() {
  return {gpu(0, "00000000:18:00.0"), gpu(1, "00000000:2A:00.0"), gpu(2, "00000000:0A:00.0"),
          gpu(3, "00000000:BA:00.0")};
}

HelloDevice hello(std::optional<std::string> device, std::optional<std::string> bus) {
  HelloDevice h;
  h.device = std::move(device);
  h.pci_bus_id = std::move(bus);
  return h;
}

TEST(StepDeviceMap, PciBusIdFromTheHelloWinsWhateverTheCase) {
  const auto m = map_step_device("cuda:1", hello("cuda:1", "0000:2a:00.0"), four_gpus());
  EXPECT_EQ(m.gpu, 1u);
  EXPECT_EQ(m.rule, DeviceRule::kPciBusId);
  EXPECT_NE(m.why.find("0000:2a:00.0"), std::string::npos);
}

TEST(StepDeviceMap, AHelloWithoutDeviceStillGivesItsBusId) {
  EXPECT_EQ(map_step_device("cuda:0", hello(std::nullopt, "00000000:BA:00.0"), four_gpus()).gpu,
            3u);
}

TEST(StepDeviceMap, ABusIdNotRecordedIsUnmappedEvenOnASingleGpuRecording) {
  const auto m =
      map_step_device("cuda:0", hello("cuda:0", "00000000:99:00.0"), {gpu(0, "00000000:18:00.0")});
  EXPECT_FALSE(m.gpu);
  EXPECT_EQ(m.rule, DeviceRule::kUnmapped);
  EXPECT_NE(m.why.find("not a recorded GPU"), std::string::npos);
}

TEST(StepDeviceMap, ABusIdIsNoUseWhenTheRecordingHasNone) {
  const auto m =
      map_step_device("cuda:0", hello("cuda:0", "00000000:18:00.0"), {gpu(0, std::nullopt)});
  EXPECT_EQ(m.gpu, 0u);
  EXPECT_EQ(m.rule, DeviceRule::kSingleGpu);
}

TEST(StepDeviceMap, SingleGpuRecordingTakesCuda0Only) {
  const std::vector<RecordedDevice> one{gpu(0, std::nullopt)};
  const auto m = map_step_device("cuda:0", std::nullopt, one);
  EXPECT_EQ(m.gpu, 0u);
  EXPECT_EQ(m.rule, DeviceRule::kSingleGpu);
  // cuda:1 means the process saw a second GPU the recording does not hold.
  EXPECT_FALSE(map_step_device("cuda:1", std::nullopt, one).gpu);
}

TEST(StepDeviceMap, HelloOfAnotherDeviceDoesNotLendItsBusId) {
  // The process moved to cuda:1 after saying hello on cuda:0.
  const auto m = map_step_device("cuda:1", hello("cuda:0", "00000000:18:00.0"), four_gpus());
  EXPECT_FALSE(m.gpu);
}

TEST(StepDeviceMap, VisibleDevicesInPciOrder) {
  auto h = hello("cuda:1", std::nullopt);
  h.cuda_device_order = "PCI_BUS_ID";
  h.cuda_visible_devices = "3, 0";
  // PCI order: 0A (NVML 2), 18 (0), 2A (1), BA (3); visible 3 -> BA, 0 -> 0A.
  auto m = map_step_device("cuda:0", h, four_gpus());
  EXPECT_EQ(m.gpu, 3u);
  EXPECT_EQ(m.rule, DeviceRule::kVisibleInPciOrder);
  EXPECT_EQ(map_step_device("cuda:1", h, four_gpus()).gpu, 2u);
  EXPECT_FALSE(map_step_device("cuda:2", h, four_gpus()).gpu);  // only two visible
  h.cuda_visible_devices.reset();
  EXPECT_EQ(map_step_device("cuda:1", h, four_gpus()).gpu, 0u);
}

TEST(StepDeviceMap, VisibleDevicesAreRefusedWhenUnsafe) {
  auto h = hello("cuda:0", std::nullopt);
  h.cuda_visible_devices = "1";
  EXPECT_FALSE(map_step_device("cuda:0", h, four_gpus()).gpu) << "fastest-first order";
  h.cuda_device_order = "PCI_BUS_ID";
  h.cuda_visible_devices = "GPU-1234abcd";
  EXPECT_FALSE(map_step_device("cuda:0", h, four_gpus()).gpu) << "a UUID";
  h.cuda_visible_devices = "0,,1";
  EXPECT_FALSE(map_step_device("cuda:0", h, four_gpus()).gpu) << "an empty entry";
  h.cuda_visible_devices = "7";
  EXPECT_FALSE(map_step_device("cuda:0", h, four_gpus()).gpu) << "a GPU not recorded";
  h.cuda_visible_devices = "1";
  auto partial = four_gpus();
  partial.erase(partial.begin());  // GPU 0 not recorded: PCI positions are unknowable
  EXPECT_FALSE(map_step_device("cuda:0", h, partial).gpu);
  partial = four_gpus();
  partial[2].pci_bus_id.reset();
  EXPECT_FALSE(map_step_device("cuda:0", h, partial).gpu);
}

TEST(StepDeviceMap, NotAGpuOrNoDevice) {
  EXPECT_FALSE(map_step_device("cpu", std::nullopt, {gpu(0, std::nullopt)}).gpu);
  EXPECT_FALSE(map_step_device(std::nullopt, std::nullopt, {gpu(0, std::nullopt)}).gpu);
  EXPECT_FALSE(map_step_device("cuda", std::nullopt, {gpu(0, std::nullopt)}).gpu);
  EXPECT_FALSE(map_step_device("cuda:x", std::nullopt, {gpu(0, std::nullopt)}).gpu);
  const auto m = map_step_device("cpu", std::nullopt, {});
  EXPECT_NE(m.why.find("cpu"), std::string::npos);
}

TEST(StepDeviceMap, SamePciBusId) {
  EXPECT_TRUE(same_pci_bus_id("00000000:18:00.0", "0000:18:00.0"));
  EXPECT_TRUE(same_pci_bus_id("0000:1a:00.0", "00000000:1A:00.0"));
  EXPECT_FALSE(same_pci_bus_id("00000001:18:00.0", "0000:18:00.0"));
  EXPECT_FALSE(same_pci_bus_id("0000:18:00.0", "0000:18:00.1"));
  EXPECT_FALSE(same_pci_bus_id("", ""));
  EXPECT_FALSE(same_pci_bus_id("zz:18:00.0", "zz:18:00.0"));
}

TEST(StepDeviceMap, ParsesTheHello) {
  const auto h =
      parse_hello_device(R"({"type":"hello","device":"cuda:2","pci_bus_id":"00000000:18:00.0",)"
                         R"("cuda_visible_devices":"4,5,6","cuda_device_order":null,"rank":2})");
  EXPECT_EQ(h.device, "cuda:2");
  EXPECT_EQ(h.pci_bus_id, "00000000:18:00.0");
  EXPECT_EQ(h.cuda_visible_devices, "4,5,6");
  EXPECT_FALSE(h.cuda_device_order);
  EXPECT_FALSE(parse_hello_device("{not json").device);
  EXPECT_FALSE(parse_hello_device(R"({"device":3})").device);
  EXPECT_FALSE(parse_hello_device("[]").pci_bus_id);
}

}  // namespace
}  // namespace gpumon::record
