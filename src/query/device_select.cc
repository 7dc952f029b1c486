// SPDX-License-Identifier: MIT
#include "query/device_select.h"

#include <algorithm>
#include <charconv>
#include <string>

#include "query/query_parse.h"

namespace gpumon::query {
namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           const auto lower = [](char c) {
             return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
           };
           return lower(x) == lower(y);
         });
}

}  // namespace

std::optional<unsigned> match_device(std::string_view id,
                                     const std::vector<DeviceStatic>& devices) {
  if (all_digits(id)) {
    unsigned index = 0;
    const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), index);
    if (ec == std::errc() && end == id.data() + id.size() && index < devices.size()) return index;
  }
  const std::optional<PciAddress> pci =
      id.find(':') != std::string_view::npos ? parse_pci_bus_id(id) : std::nullopt;
  for (unsigned i = 0; i < devices.size(); ++i) {
    const DeviceStatic& d = devices[i];
    if (d.uuid && equal_ignoring_case(*d.uuid, id)) return i;
    if (pci && d.pci_bus_id && parse_pci_bus_id(*d.pci_bus_id) == pci) return i;
    if (d.serial && *d.serial == id) return i;
  }
  return std::nullopt;
}

Expected<std::vector<unsigned>> select_devices(std::string_view id_list,
                                               const std::vector<DeviceStatic>& devices) {
  const std::vector<std::string> ids = split_list(id_list);
  if (ids.empty()) return usage_error("-i/--id names no GPU; give an index, UUID or PCI bus id.");
  std::vector<unsigned> out;
  for (const std::string& id : ids) {
    const std::optional<unsigned> index = match_device(id, devices);
    if (!index) {
      return QueryError{kExitNoDevice, "No devices were found\ngpumon: -i " +
                                           quote_for_message(id) + " matches none of the " +
                                           std::to_string(devices.size()) + " GPU(s) here.\n"};
    }
    out.push_back(*index);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Expected<std::vector<unsigned>> choose_devices(const std::optional<std::string>& ids,
                                               const GpuBackend& backend) {
  if (backend.device_count() == 0) return QueryError{kExitNoDevice, "No devices were found\n"};
  std::vector<DeviceStatic> devices;
  for (unsigned i = 0; i < backend.device_count(); ++i) devices.push_back(backend.device(i));
  if (ids) return select_devices(*ids, devices);
  std::vector<unsigned> all(devices.size());
  for (unsigned i = 0; i < all.size(); ++i) all[i] = i;
  return all;
}

}  // namespace gpumon::query
