// SPDX-License-Identifier: MIT
#include "training/rank_device.h"

#include <algorithm>
#include <charconv>

#include "gpu/pci_bus_id.h"

namespace gpumon::training {
namespace {

// "cuda:3" -> 3. "cuda" alone is torch's current device, whose index it does not name.
std::optional<unsigned> cuda_index(std::string_view device) {
  constexpr std::string_view kPrefix = "cuda:";
  if (!device.starts_with(kPrefix)) return std::nullopt;
  device.remove_prefix(kPrefix.size());
  unsigned n = 0;
  const auto [end, ec] = std::from_chars(device.data(), device.data() + device.size(), n);
  if (ec != std::errc() || end != device.data() + device.size() || device.empty())
    return std::nullopt;
  return n;
}

// The entries of CUDA_VISIBLE_DEVICES, trimmed ("2, 3" -> "2", "3").
std::vector<std::string_view> visible_entries(std::string_view list) {
  std::vector<std::string_view> out;
  while (true) {
    const auto comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    out.push_back(item);
    if (comma == std::string_view::npos) return out;
    list.remove_prefix(comma + 1);
  }
}

// The ids of a numeric CUDA_VISIBLE_DEVICES; nullopt when any entry is not a plain number
// (UUIDs, MIG names, empty). CUDA stops at the first invalid entry, so "0,x,1" would be only
// GPU 0 there: we refuse rather than model that.
std::optional<std::vector<unsigned>> numeric_ids(std::string_view list) {
  std::vector<unsigned> ids;
  for (std::string_view item : visible_entries(list)) {
    unsigned n = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size()) return std::nullopt;
    ids.push_back(n);
  }
  return ids;
}

RankDevice unmapped(std::string why) {
  return {std::nullopt, DeviceRule::kUnmapped, std::move(why)};
}

RankDevice by_bus_id(std::string_view bus_id, const std::vector<GpuIdentity>& gpus) {
  for (const auto& g : gpus)
    if (g.pci_bus_id && same_pci_bus_id(*g.pci_bus_id, bus_id))
      return {g.index, DeviceRule::kPciBusId, "PCI bus id " + std::string(bus_id)};
  return unmapped("its PCI bus id " + std::string(bus_id) + " is not a recorded GPU");
}

RankDevice by_uuid(std::string_view uuid, const std::vector<GpuIdentity>& gpus) {
  for (const auto& g : gpus)
    if (g.uuid && *g.uuid == uuid) return {g.index, DeviceRule::kDeviceUuid, "its GPU's UUID"};
  return unmapped("its GPU's UUID is not a recorded GPU's");
}

// CUDA accepts a unique prefix of a UUID in CUDA_VISIBLE_DEVICES.
std::optional<RankDevice> by_visible_uuid(unsigned cuda, std::string_view visible,
                                          const std::vector<GpuIdentity>& gpus) {
  const auto entries = visible_entries(visible);
  if (cuda >= entries.size() || !entries[cuda].starts_with("GPU-")) return std::nullopt;
  const GpuIdentity* found = nullptr;
  for (const auto& g : gpus) {
    if (!g.uuid || !g.uuid->starts_with(entries[cuda])) continue;
    if (found) return unmapped("CUDA_VISIBLE_DEVICES names a UUID prefix of several GPUs");
    found = &g;
  }
  if (!found) return unmapped("CUDA_VISIBLE_DEVICES names a UUID no recorded GPU has");
  return RankDevice{found->index, DeviceRule::kVisibleUuid, "CUDA_VISIBLE_DEVICES UUID"};
}

RankDevice by_visible_order(unsigned cuda, const Hello& h, const std::vector<GpuIdentity>& gpus) {
  std::vector<unsigned> visible;
  if (h.cuda_visible_devices) {
    auto ids = numeric_ids(*h.cuda_visible_devices);
    if (!ids) return unmapped("CUDA_VISIBLE_DEVICES is not a list of GPU numbers");
    visible = std::move(*ids);
  } else {
    for (unsigned i = 0; i < gpus.size(); ++i) visible.push_back(i);
  }
  if (cuda >= visible.size()) return unmapped("cuda:" + std::to_string(cuda) + " is not visible");
  // Every GPU of the machine must be listed for "N-th in PCI order" to mean the same.
  std::vector<std::pair<PciAddress, unsigned>> by_bus;
  for (unsigned i = 0; i < gpus.size(); ++i) {
    const auto it =
        std::find_if(gpus.begin(), gpus.end(), [i](const GpuIdentity& g) { return g.index == i; });
    const auto address =
        it == gpus.end() || !it->pci_bus_id ? std::nullopt : parse_pci_bus_id(*it->pci_bus_id);
    if (!address) return unmapped("the recording does not list every GPU with its PCI bus id");
    by_bus.emplace_back(*address, it->index);
  }
  std::sort(by_bus.begin(), by_bus.end());
  const unsigned id = visible[cuda];
  if (id >= by_bus.size()) return unmapped("CUDA_VISIBLE_DEVICES names a GPU the recording lacks");
  return {by_bus[id].second, DeviceRule::kVisibleInPciOrder,
          "CUDA_DEVICE_ORDER=PCI_BUS_ID" +
              (h.cuda_visible_devices ? ", CUDA_VISIBLE_DEVICES=" + *h.cuda_visible_devices
                                      : std::string())};
}

}  // namespace

std::vector<GpuIdentity> gpu_identities(const std::vector<DeviceStatic>& devices) {
  std::vector<GpuIdentity> out;
  out.reserve(devices.size());
  for (const DeviceStatic& d : devices) {
    GpuIdentity g{d.index, std::nullopt, std::nullopt};
    if (d.uuid.has_value()) g.uuid = d.uuid.value();
    if (d.pci_bus_id.has_value()) g.pci_bus_id = d.pci_bus_id.value();
    out.push_back(std::move(g));
  }
  return out;
}

const char* device_rule_name(DeviceRule rule) {
  switch (rule) {
    case DeviceRule::kPciBusId: return "pci_bus_id";
    case DeviceRule::kDeviceUuid: return "device_uuid";
    case DeviceRule::kVisibleUuid: return "cuda_visible_devices";
    case DeviceRule::kVisibleInPciOrder: return "cuda_device_order";
    case DeviceRule::kSingleGpu: return "single_gpu";
    case DeviceRule::kNvmlProcesses: return "nvml_processes";
    case DeviceRule::kUnmapped: return "";
  }
  return "";
}

RankDevice map_rank_device(std::optional<std::string_view> torch_device, const Hello* hello,
                           const std::vector<GpuIdentity>& gpus,
                           std::optional<unsigned> nvml_process_gpu) {
  if (!torch_device && hello && hello->device) torch_device = *hello->device;
  const auto cuda = torch_device ? cuda_index(*torch_device) : std::optional<unsigned>();
  if (torch_device && !cuda && *torch_device != "cuda")
    return unmapped("it ran on " + std::string(*torch_device) + ", not a GPU");
  // The hello's identity is of the device it named then; a process that moved to another
  // device keeps only its environment.
  const bool same_device =
      hello && (!hello->device || !torch_device || *hello->device == *torch_device);
  auto any = [&](auto field) {
    return std::any_of(gpus.begin(), gpus.end(),
                       [&](const GpuIdentity& g) { return (g.*field).has_value(); });
  };
  if (same_device && hello->pci_bus_id && any(&GpuIdentity::pci_bus_id))
    return by_bus_id(*hello->pci_bus_id, gpus);
  if (same_device && hello->device_uuid && any(&GpuIdentity::uuid))
    return by_uuid(*hello->device_uuid, gpus);
  if (cuda && hello && hello->cuda_visible_devices)
    if (auto m = by_visible_uuid(*cuda, *hello->cuda_visible_devices, gpus)) return *m;
  if (cuda && hello && hello->cuda_device_order == "PCI_BUS_ID")
    return by_visible_order(*cuda, *hello, gpus);
  // "cuda" or cuda:0 on a machine of one GPU. A process that named no device may run on the
  // CPU (it said hello before importing torch): never placed on a GPU without evidence.
  if (torch_device && (!cuda || *cuda == 0) && gpus.size() == 1)
    return {gpus.front().index, DeviceRule::kSingleGpu, "the only GPU recorded"};
  if (nvml_process_gpu)
    return {*nvml_process_gpu, DeviceRule::kNvmlProcesses, "NVML saw its pid on that GPU"};
  if (!torch_device) return unmapped("it named no device");
  if (gpus.size() == 1)
    return unmapped(std::string(*torch_device) + " is not the only GPU recorded");
  if (!hello) return unmapped("the process sent no hello with its GPU's PCI bus id");
  return unmapped(
      "torch numbers GPUs fastest first and the hello has no PCI bus id (set "
      "CUDA_DEVICE_ORDER=PCI_BUS_ID)");
}

}  // namespace gpumon::training
