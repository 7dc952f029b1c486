// SPDX-License-Identifier: MIT
// map_rank_device: every rule, and every case where a guess would be wrong stays unmapped.
#include "training/rank_device.h"

#include <gtest/gtest.h>

namespace gpumon::training {
namespace {

GpuIdentity gpu(unsigned index, std::optional<std::string> bus) {
  return {index, "GPU-" + std::to_string(index) + "0000000-aaaa", std::move(bus)};
}

// NVML order on purpose not PCI order, so rule 3 must sort.
std::vector<GpuIdentity> four_gpus() {
  return {gpu(0, "00000000:18:00.0"), gpu(1, "00000000:2A:00.0"), gpu(2, "00000000:0A:00.0"),
          gpu(3, "00000000:BA:00.0")};
}

Hello hello(std::optional<std::string> device, std::optional<std::string> bus) {
  Hello h;
  h.device = std::move(device);
  h.pci_bus_id = std::move(bus);
  return h;
}

// The hello by value, as the callers hold it (nullopt: no hello).
RankDevice map(std::optional<std::string_view> device, const std::optional<Hello>& h,
               const std::vector<GpuIdentity>& gpus, std::optional<unsigned> nvml = std::nullopt) {
  return map_rank_device(device, h ? &*h : nullptr, gpus, nvml);
}

TEST(RankDevice, PciBusIdFromTheHelloWinsWhateverTheCase) {
  const auto m = map("cuda:1", hello("cuda:1", "0000:2a:00.0"), four_gpus());
  EXPECT_EQ(m.gpu, 1u);
  EXPECT_EQ(m.rule, DeviceRule::kPciBusId);
  EXPECT_NE(m.why.find("0000:2a:00.0"), std::string::npos);
}

TEST(RankDevice, AHelloWithoutDeviceStillGivesItsBusId) {
  EXPECT_EQ(map("cuda:0", hello(std::nullopt, "00000000:BA:00.0"), four_gpus()).gpu, 3u);
}

TEST(RankDevice, ABusIdNotRecordedIsUnmappedEvenOnASingleGpuRecording) {
  const auto m = map("cuda:0", hello("cuda:0", "00000000:99:00.0"), {gpu(0, "00000000:18:00.0")});
  EXPECT_FALSE(m.gpu);
  EXPECT_EQ(m.rule, DeviceRule::kUnmapped);
  EXPECT_NE(m.why.find("not a recorded GPU"), std::string::npos);
}

TEST(RankDevice, ABusIdIsNoUseWhenTheRecordingHasNone) {
  const auto m = map("cuda:0", hello("cuda:0", "00000000:18:00.0"), {gpu(0, std::nullopt)});
  EXPECT_EQ(m.gpu, 0u);
  EXPECT_EQ(m.rule, DeviceRule::kSingleGpu);
}

TEST(RankDevice, SingleGpuRecordingTakesCuda0Only) {
  const std::vector<GpuIdentity> one{gpu(0, std::nullopt)};
  const auto m = map("cuda:0", std::nullopt, one);
  EXPECT_EQ(m.gpu, 0u);
  EXPECT_EQ(m.rule, DeviceRule::kSingleGpu);
  // cuda:1 means the process saw a second GPU the recording does not hold.
  EXPECT_FALSE(map("cuda:1", std::nullopt, one).gpu);
}

TEST(RankDevice, HelloOfAnotherDeviceDoesNotLendItsBusId) {
  // The process moved to cuda:1 after saying hello on cuda:0.
  const auto m = map("cuda:1", hello("cuda:0", "00000000:18:00.0"), four_gpus());
  EXPECT_FALSE(m.gpu);
}

TEST(RankDevice, VisibleDevicesInPciOrder) {
  auto h = hello("cuda:1", std::nullopt);
  h.cuda_device_order = "PCI_BUS_ID";
  h.cuda_visible_devices = "3, 0";
  // PCI order: 0A (NVML 2), 18 (0), 2A (1), BA (3); visible 3 -> BA, 0 -> 0A.
  auto m = map("cuda:0", h, four_gpus());
  EXPECT_EQ(m.gpu, 3u);
  EXPECT_EQ(m.rule, DeviceRule::kVisibleInPciOrder);
  EXPECT_EQ(map("cuda:1", h, four_gpus()).gpu, 2u);
  EXPECT_FALSE(map("cuda:2", h, four_gpus()).gpu);  // only two visible
  h.cuda_visible_devices.reset();
  EXPECT_EQ(map("cuda:1", h, four_gpus()).gpu, 0u);
}

TEST(RankDevice, VisibleDevicesAreRefusedWhenUnsafe) {
  auto h = hello("cuda:0", std::nullopt);
  h.cuda_visible_devices = "1";
  EXPECT_FALSE(map("cuda:0", h, four_gpus()).gpu) << "fastest-first order";
  h.cuda_device_order = "PCI_BUS_ID";
  h.cuda_visible_devices = "GPU-1234abcd";
  EXPECT_FALSE(map("cuda:0", h, four_gpus()).gpu) << "a UUID";
  h.cuda_visible_devices = "0,,1";
  EXPECT_FALSE(map("cuda:0", h, four_gpus()).gpu) << "an empty entry";
  h.cuda_visible_devices = "7";
  EXPECT_FALSE(map("cuda:0", h, four_gpus()).gpu) << "a GPU not recorded";
  h.cuda_visible_devices = "1";
  auto partial = four_gpus();
  partial.erase(partial.begin());  // GPU 0 not recorded: PCI positions are unknowable
  EXPECT_FALSE(map("cuda:0", h, partial).gpu);
  partial = four_gpus();
  partial[2].pci_bus_id.reset();
  EXPECT_FALSE(map("cuda:0", h, partial).gpu);
}

TEST(RankDevice, NotAGpuOrNoDevice) {
  EXPECT_FALSE(map("cpu", std::nullopt, {gpu(0, std::nullopt)}).gpu);
  EXPECT_FALSE(map("cuda:x", std::nullopt, {gpu(0, std::nullopt)}).gpu);
  EXPECT_FALSE(map(std::nullopt, std::nullopt, four_gpus()).gpu);
  EXPECT_FALSE(map("cuda", std::nullopt, four_gpus()).gpu) << "the current device: no index";
  // With one GPU, a process that names CUDA without an index can only be on it; one that names
  // no device may be a CPU job (gpumon started before torch): not guessed.
  EXPECT_FALSE(map(std::nullopt, std::nullopt, {gpu(4, std::nullopt)}).gpu);
  EXPECT_EQ(map("cuda", std::nullopt, {gpu(4, std::nullopt)}).gpu, 4u);
  const auto m = map("cpu", std::nullopt, {});
  EXPECT_NE(m.why.find("cpu"), std::string::npos);
}

TEST(RankDevice, DeviceUuidFromTheHello) {
  auto h = hello("cuda:0", std::nullopt);
  h.device_uuid = "GPU-20000000-aaaa";
  const auto m = map("cuda:0", h, four_gpus());
  EXPECT_EQ(m.gpu, 2u);
  EXPECT_EQ(m.rule, DeviceRule::kDeviceUuid);
  h.device_uuid = "GPU-ffffffff";
  EXPECT_FALSE(map("cuda:0", h, four_gpus()).gpu) << "a UUID not recorded";
}

TEST(RankDevice, VisibleDeviceUuidOrAUniquePrefixOfOne) {
  auto h = hello("cuda:1", std::nullopt);
  h.cuda_visible_devices = "GPU-00000000-aaaa, GPU-30000000";
  auto m = map("cuda:1", h, four_gpus());
  EXPECT_EQ(m.gpu, 3u);
  EXPECT_EQ(m.rule, DeviceRule::kVisibleUuid);
  EXPECT_EQ(map("cuda:0", h, four_gpus()).gpu, 0u);
  h.cuda_visible_devices = "GPU-";  // every GPU's prefix
  EXPECT_FALSE(map("cuda:0", h, four_gpus()).gpu);
}

TEST(RankDevice, NvmlProcessesWhenNothingElseIsSafe) {
  const auto m = map("cuda:0", hello("cuda:0", std::nullopt), four_gpus(), 2u);
  EXPECT_EQ(m.gpu, 2u);
  EXPECT_EQ(m.rule, DeviceRule::kNvmlProcesses);
  EXPECT_FALSE(map("cpu", std::nullopt, four_gpus(), 2u).gpu) << "a CPU process";
  EXPECT_EQ(map("cuda:1", hello("cuda:1", "0000:2a:00.0"), four_gpus(), 2u).gpu, 1u)
      << "the bus id wins";
}

TEST(RankDevice, RuleNamesAreTheJsonNames) {
  EXPECT_STREQ(device_rule_name(DeviceRule::kPciBusId), "pci_bus_id");
  EXPECT_STREQ(device_rule_name(DeviceRule::kNvmlProcesses), "nvml_processes");
  EXPECT_STREQ(device_rule_name(DeviceRule::kUnmapped), "");
}

}  // namespace
}  // namespace gpumon::training
