// SPDX-License-Identifier: MIT
// PCI bus ids, the one name a GPU has in NVML, in CUDA and in /sys alike. NVML writes the domain
// with 8 digits in some calls and 4 in others, torch in lower case: parse, then compare numbers.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpumon {

/// A PCI address, parsed so that "18:00.0", "0000:18:00.0" and "00000000:18:00.0" are equal.
struct PciAddress {
  std::uint32_t domain = 0;
  std::uint32_t bus = 0;
  std::uint32_t device = 0;
  std::uint32_t function = 0;
  friend auto operator<=>(const PciAddress&, const PciAddress&) = default;
};

/// Parses "[domain:]bus:device.function" in hex, either case (domain up to 8 digits, bus and
/// device up to 2, function 1). nullopt when `text` is not one.
std::optional<PciAddress> parse_pci_bus_id(std::string_view text);

/// NVML's form: "00000000:18:00.0" (8-digit domain, upper case).
std::string format_pci_bus_id(const PciAddress& a);

/// True when both parse and name the same device.
bool same_pci_bus_id(std::string_view a, std::string_view b);

}  // namespace gpumon
