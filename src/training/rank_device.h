// SPDX-License-Identifier: MIT
// Which GPU (NVML's index) a training process runs on: the one mapping the report's charts and
// the diagnoses' findings both use, so a rank is never charted on one GPU and diagnosed on
// another. A process names its device as torch does ("cuda:1": CUDA's numbering, after
// CUDA_VISIBLE_DEVICES and in CUDA_DEVICE_ORDER), which is not NVML's index. Never guesses:
// when no rule below is safe the answer is "unmapped", with the reason.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/gpu_types.h"
#include "training/training_types.h"

namespace gpumon::training {

/// What names a GPU the same way in NVML and in CUDA.
struct GpuIdentity {
  unsigned index = 0;  ///< NVML's
  std::optional<std::string> uuid;
  std::optional<std::string> pci_bus_id;
};

/// The identities of `devices` as NVML gave them (a missing reading is nullopt).
std::vector<GpuIdentity> gpu_identities(const std::vector<DeviceStatic>& devices);

enum class DeviceRule {
  kPciBusId,           ///< the hello's PCI bus id is one of the GPUs'
  kDeviceUuid,         ///< the hello's device UUID is one of the GPUs'
  kVisibleUuid,        ///< the N-th entry of CUDA_VISIBLE_DEVICES is a GPU's UUID
  kVisibleInPciOrder,  ///< CUDA_DEVICE_ORDER=PCI_BUS_ID and numeric CUDA_VISIBLE_DEVICES (or none)
  kSingleGpu,          ///< cuda:0 and exactly one GPU
  kNvmlProcesses,      ///< NVML saw the pid on that GPU (the one where it held the most memory)
  kUnmapped,
};

/// "pci_bus_id", "device_uuid", "cuda_visible_devices", "cuda_device_order", "single_gpu",
/// "nvml_processes"; "" for kUnmapped (diagnose::RankInfo::gpu_mapped_by).
const char* device_rule_name(DeviceRule rule);

struct RankDevice {
  std::optional<unsigned> gpu;  ///< NVML index; nullopt when unmapped
  DeviceRule rule = DeviceRule::kUnmapped;
  std::string why;  ///< one line for a reader: how it was mapped, or why it could not be
};

/// Maps a process's `torch_device` (its steps' or hello's device; nullopt when it named none)
/// to one of `gpus`. `hello` is the process's latest; `nvml_process_gpu` is the GPU where NVML
/// saw its pid hold the most memory, if it did. Rules, the first that applies:
/// 1. the hello names the same device (or none) and has a PCI bus id, and the GPUs have bus
///    ids: the GPU with that id, else unmapped (the process runs on a GPU not listed);
/// 2. likewise with the hello's device UUID;
/// 3. cuda:N where the N-th entry of CUDA_VISIBLE_DEVICES is a UUID (or unique prefix of one);
/// 4. CUDA_DEVICE_ORDER=PCI_BUS_ID, CUDA_VISIBLE_DEVICES unset or numeric: cuda:N is the N-th
///    visible id, that position among the GPUs in PCI bus order; only when `gpus` holds GPUs
///    0..n-1, every one with a PCI bus id;
/// 5. cuda:0 (or "cuda"), and exactly one GPU: that GPU (a process that named no device
///    may run on the CPU: rule 6 or unmapped);
/// 6. `nvml_process_gpu`;
/// otherwise unmapped ("cpu", UUIDs not listed, fastest-first order, ...).
RankDevice map_rank_device(std::optional<std::string_view> torch_device, const Hello* hello,
                           const std::vector<GpuIdentity>& gpus,
                           std::optional<unsigned> nvml_process_gpu = std::nullopt);

}  // namespace gpumon::training
