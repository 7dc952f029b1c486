// SPDX-License-Identifier: MIT
// XID codes: what the driver's error events mean, defined once for the diagnoses (post-hoc and
// live, src/diagnose/rules/hardware.cc) and any output that describes an XID. The meanings and
// classes follow NVIDIA's Xid catalog
// (https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html): codes whose
// resolution is to fix or restart the application are application errors; codes that name
// failing memory, links, the bus or the GPU's firmware, whose resolution is a reset, a drain
// or an RMA, are hardware/driver errors. Codes not listed here are unknown to gpumon, not
// harmless.
//
// Thread-safety: pure functions over a constant table.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpumon {

enum class XidClass : std::uint8_t {
  kUnknown = 0,      ///< not in the table: look it up in NVIDIA's catalog
  kApplication = 1,  ///< the process on the GPU did something wrong (bad access, fault)
  kHardware = 2,     ///< the GPU, its memory, NVLink, the bus or its firmware failed
};

struct XidInfo {
  XidClass xid_class = XidClass::kUnknown;
  std::string_view meaning;  ///< a few words, lower case; empty when unknown
  /// dcgm-exporter's err_msg label for the code, spelled exactly as it does (alert rules
  /// written for it match on the text); empty when unknown.
  std::string_view dcgm_name;
};

/// The class and meaning of an XID code.
XidInfo xid_info(std::uint64_t code);

/// "application", "hardware", "unknown".
std::string_view xid_class_name(XidClass c);

/// How every output names an XID: "XID 79: GPU has fallen off the bus (hardware)", or
/// "XID 999 (unknown: see NVIDIA's XID catalog)".
std::string describe_xid(std::uint64_t code);

}  // namespace gpumon
