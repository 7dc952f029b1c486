// SPDX-License-Identifier: MIT
#include "gpu/pci_bus_id.h"

#include <charconv>
#include <cstdio>

namespace gpumon {
namespace {

// 1..max_digits hex digits making up all of `text`.
std::optional<std::uint32_t> hex_part(std::string_view text, std::size_t max_digits) {
  if (text.empty() || text.size() > max_digits) return std::nullopt;
  std::uint32_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<PciAddress> parse_pci_bus_id(std::string_view text) {
  const std::size_t dot = text.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const std::string_view head = text.substr(0, dot);
  const std::size_t last_colon = head.rfind(':');
  if (last_colon == std::string_view::npos) return std::nullopt;
  const std::string_view bus_part = head.substr(0, last_colon);
  const std::size_t first_colon = bus_part.rfind(':');

  std::optional<std::uint32_t> domain = 0U;
  std::optional<std::uint32_t> bus;
  if (first_colon == std::string_view::npos) {
    bus = hex_part(bus_part, 2);
  } else {
    domain = hex_part(bus_part.substr(0, first_colon), 8);
    bus = hex_part(bus_part.substr(first_colon + 1), 2);
  }
  const auto device = hex_part(head.substr(last_colon + 1), 2);
  const auto function = hex_part(text.substr(dot + 1), 1);
  if (!domain || !bus || !device || !function) return std::nullopt;
  return PciAddress{*domain, *bus, *device, *function};
}

std::string format_pci_bus_id(const PciAddress& a) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%08X:%02X:%02X.%X", a.domain, a.bus, a.device, a.function);
  return buf;
}

bool same_pci_bus_id(std::string_view a, std::string_view b) {
  const auto x = parse_pci_bus_id(a), y = parse_pci_bus_id(b);
  return x && y && *x == *y;
}

}  // namespace gpumon
