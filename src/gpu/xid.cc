// SPDX-License-Identifier: MIT
#include "gpu/xid.h"

#include <array>

namespace gpumon {
namespace {

struct XidRow {
  std::uint64_t code;
  XidClass xid_class;
  std::string_view meaning;
};

// NVIDIA's Xid catalog (gpu/xid.h); sorted by code.
constexpr std::array kXids{
    XidRow{13, XidClass::kApplication, "graphics engine exception"},
    XidRow{31, XidClass::kApplication, "GPU memory page fault"},
    XidRow{43, XidClass::kApplication, "GPU stopped processing (user application fault)"},
    XidRow{45, XidClass::kApplication, "preemptive cleanup"},
    XidRow{48, XidClass::kHardware, "double-bit ECC error"},
    XidRow{63, XidClass::kHardware, "row remapping / ECC page retirement"},
    XidRow{64, XidClass::kHardware, "row remapping / ECC page retirement failure"},
    XidRow{74, XidClass::kHardware, "NVLink error"},
    XidRow{79, XidClass::kHardware, "GPU has fallen off the bus"},
    XidRow{92, XidClass::kHardware, "high single-bit ECC error rate"},
    XidRow{94, XidClass::kHardware, "contained ECC error"},
    XidRow{95, XidClass::kHardware, "uncontained ECC error"},
    XidRow{119, XidClass::kHardware, "GSP RPC timeout"},
    XidRow{120, XidClass::kHardware, "GSP error"},
};

}  // namespace

XidInfo xid_info(std::uint64_t code) {
  for (const auto& r : kXids)
    if (r.code == code) return {r.xid_class, r.meaning};
  return {};
}

std::string_view xid_class_name(XidClass c) {
  switch (c) {
    case XidClass::kApplication: return "application";
    case XidClass::kHardware: return "hardware";
    case XidClass::kUnknown: return "unknown";
  }
  return "unknown";
}

std::string describe_xid(std::uint64_t code) {
  const XidInfo x = xid_info(code);
  if (x.meaning.empty())
    return "XID " + std::to_string(code) + " (unknown: see NVIDIA's XID catalog)";
  return "XID " + std::to_string(code) + ": " + std::string(x.meaning) + " (" +
         std::string(xid_class_name(x.xid_class)) + ")";
}

}  // namespace gpumon
