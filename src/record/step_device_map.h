// SPDX-License-Identifier: MIT
// Which recorded GPU (NVML's index) a training process's steps ran on. The steps name the
// device as torch does ("cuda:1": torch's numbering, after CUDA_VISIBLE_DEVICES and in
// CUDA_DEVICE_ORDER), which is not NVML's index; the process's hello may carry the device's PCI
// bus id, which names the same GPU in both. Used by `gpumon report` (allocator memory on a GPU's
// chart, the step axis) and the diagnoses. Never guesses: when no rule below is safe the answer
// is "unmapped", with the reason.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "record/recording_types.h"

namespace gpumon::record {

/// The device fields of a training process's hello (RecordedRankEvent kind "hello", detail).
struct HelloDevice {
  std::optional<std::string> device;                ///< torch's "cuda:N" at hello time
  std::optional<std::string> pci_bus_id;            ///< of that device ("00000000:18:00.0")
  std::optional<std::string> cuda_visible_devices;  ///< the environment variable, verbatim
  std::optional<std::string> cuda_device_order;     ///< "PCI_BUS_ID", "FASTEST_FIRST", unset
};

/// Reads the fields above from a hello's JSON; a field that is absent, null, not a string (or
/// JSON that does not parse) stays nullopt.
HelloDevice parse_hello_device(std::string_view detail_json);

enum class DeviceRule {
  kPciBusId,           ///< the hello's PCI bus id is a recorded GPU's
  kSingleGpu,          ///< cuda:0 and the recording holds one GPU
  kVisibleInPciOrder,  ///< CUDA_DEVICE_ORDER=PCI_BUS_ID and numeric CUDA_VISIBLE_DEVICES (or none)
  kUnmapped,
};

struct StepDevice {
  std::optional<unsigned> gpu;  ///< NVML index in the recording; nullopt when unmapped
  DeviceRule rule = DeviceRule::kUnmapped;
  std::string why;  ///< one line for a reader: how it was mapped, or why it could not be
};

/// Maps `torch_device` (a step's `device`) to a recorded GPU. Rules, first that applies:
/// 1. the hello (of the same process, naming the same device or none) has a PCI bus id: the
///    recorded GPU with that id (case and the 4- or 8-digit domain ignored), else unmapped
///    (skipped when no recorded GPU has a bus id);
/// 2. "cuda:0" and exactly one recorded GPU: that GPU;
/// 3. CUDA_DEVICE_ORDER=PCI_BUS_ID, CUDA_VISIBLE_DEVICES unset or numeric ids: cuda:N is the
///    N-th visible id, which is that position among the GPUs in PCI bus order; used only when
///    the recording holds GPUs 0..n-1, every one with a PCI bus id, and the id is below n;
/// otherwise unmapped ("cpu", no device, UUIDs in CUDA_VISIBLE_DEVICES, fastest-first order).
StepDevice map_step_device(std::optional<std::string_view> torch_device,
                           const std::optional<HelloDevice>& hello,
                           const std::vector<RecordedDevice>& devices);

/// True when two PCI bus ids name the same device ("00000000:18:00.0" == "0000:18:00.0").
bool same_pci_bus_id(std::string_view a, std::string_view b);

}  // namespace gpumon::record
