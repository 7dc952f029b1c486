// SPDX-License-Identifier: MIT
#include "record/step_device_map.h"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

namespace gpumon::record {
namespace {

// "cuda:3" -> 3; "cuda" alone is torch's current device, which a step does not name.
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

// Splits "domain:bus:dev.fn" into the domain's value and the rest, lower case.
std::optional<std::pair<unsigned long long, std::string>> split_bus_id(std::string_view id) {
  const auto colon = id.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 8) return std::nullopt;
  unsigned long long domain = 0;
  const auto [end, ec] = std::from_chars(id.data(), id.data() + colon, domain, 16);
  if (ec != std::errc() || end != id.data() + colon) return std::nullopt;
  std::string rest(id.substr(colon + 1));
  if (rest.empty()) return std::nullopt;
  std::transform(rest.begin(), rest.end(), rest.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return std::pair{domain, rest};
}

// The ids of a numeric CUDA_VISIBLE_DEVICES ("2,3", " 0 , 1"); nullopt when any entry is not
// a plain number (UUIDs, MIG names). CUDA stops at the first invalid entry, so "0,x,1" would
// be only GPU 0 there: we refuse rather than model that.
std::optional<std::vector<unsigned>> numeric_ids(std::string_view list) {
  std::vector<unsigned> ids;
  while (true) {
    const auto comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    unsigned n = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size()) return std::nullopt;
    ids.push_back(n);
    if (comma == std::string_view::npos) return ids;
    list.remove_prefix(comma + 1);
  }
}

StepDevice unmapped(std::string why) {
  return {std::nullopt, DeviceRule::kUnmapped, std::move(why)};
}

StepDevice by_bus_id(std::string_view bus_id, const std::vector<RecordedDevice>& devices) {
  for (const auto& d : devices)
    if (d.pci_bus_id && same_pci_bus_id(*d.pci_bus_id, bus_id))
      return {d.index, DeviceRule::kPciBusId, "PCI bus id " + std::string(bus_id)};
  return unmapped("its PCI bus id " + std::string(bus_id) + " is not a recorded GPU");
}

StepDevice by_visible_order(unsigned cuda, const HelloDevice& h,
                            const std::vector<RecordedDevice>& devices) {
  std::vector<unsigned> visible;
  if (h.cuda_visible_devices) {
    auto ids = numeric_ids(*h.cuda_visible_devices);
    if (!ids) return unmapped("CUDA_VISIBLE_DEVICES is not a list of GPU numbers");
    visible = std::move(*ids);
  } else {
    for (unsigned i = 0; i < devices.size(); ++i) visible.push_back(i);
  }
  if (cuda >= visible.size()) return unmapped("cuda:" + std::to_string(cuda) + " is not visible");
  // Every GPU of the machine must be in the recording for "N-th in PCI order" to mean the same.
  std::vector<const RecordedDevice*> by_bus;
  for (unsigned i = 0; i < devices.size(); ++i) {
    const auto it = std::find_if(devices.begin(), devices.end(),
                                 [i](const RecordedDevice& d) { return d.index == i; });
    if (it == devices.end() || !it->pci_bus_id || !split_bus_id(*it->pci_bus_id))
      return unmapped("the recording does not list every GPU with its PCI bus id");
    by_bus.push_back(&*it);
  }
  std::sort(by_bus.begin(), by_bus.end(), [](const RecordedDevice* a, const RecordedDevice* b) {
    return split_bus_id(*a->pci_bus_id) < split_bus_id(*b->pci_bus_id);
  });
  const unsigned id = visible[cuda];
  if (id >= by_bus.size()) return unmapped("CUDA_VISIBLE_DEVICES names a GPU the recording lacks");
  return {by_bus[id]->index, DeviceRule::kVisibleInPciOrder,
          "CUDA_DEVICE_ORDER=PCI_BUS_ID" +
              (h.cuda_visible_devices ? ", CUDA_VISIBLE_DEVICES=" + *h.cuda_visible_devices
                                      : std::string())};
}

}  // namespace

bool same_pci_bus_id(std::string_view a, std::string_view b) {
  const auto x = split_bus_id(a), y = split_bus_id(b);
  return x && y && *x == *y;
}

HelloDevice parse_hello_device(std::string_view detail_json) {
  HelloDevice h;
  const auto j = nlohmann::json::parse(detail_json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return h;
  auto field = [&](const char* key) -> std::optional<std::string> {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  h.device = field("device");
  h.pci_bus_id = field("pci_bus_id");
  h.cuda_visible_devices = field("cuda_visible_devices");
  h.cuda_device_order = field("cuda_device_order");
  return h;
}

StepDevice map_step_device(std::optional<std::string_view> torch_device,
                           const std::optional<HelloDevice>& hello,
                           const std::vector<RecordedDevice>& devices) {
  if (!torch_device) return unmapped("the steps do not name their device");
  const auto cuda = cuda_index(*torch_device);
  if (!cuda) return unmapped("the steps ran on " + std::string(*torch_device) + ", not a GPU");
  const bool same_device = hello && (!hello->device || *hello->device == *torch_device);
  // A recording whose GPUs have no bus id (NVML did not give one) cannot use rule 1.
  const bool bus_ids_recorded = std::any_of(devices.begin(), devices.end(),
                                            [](const RecordedDevice& d) { return d.pci_bus_id; });
  if (same_device && hello->pci_bus_id && bus_ids_recorded)
    return by_bus_id(*hello->pci_bus_id, devices);
  if (*cuda == 0 && devices.size() == 1)
    return {devices.front().index, DeviceRule::kSingleGpu, "the only GPU recorded"};
  // The environment is the process's, whichever device its hello named.
  if (hello && hello->cuda_device_order == "PCI_BUS_ID")
    return by_visible_order(*cuda, *hello, devices);
  if (!hello) return unmapped("the process sent no hello with its GPU's PCI bus id");
  return unmapped(
      "torch numbers GPUs fastest first and the hello has no PCI bus id (set "
      "CUDA_DEVICE_ORDER=PCI_BUS_ID)");
}

}  // namespace gpumon::record
