// SPDX-License-Identifier: MIT
#include "gpu/xid.h"

#include <array>

namespace gpumon {
namespace {

struct XidRow {
  std::uint64_t code;
  XidClass xid_class;
  std::string_view meaning;
  std::string_view dcgm_name;
};

// NVIDIA's Xid catalog (gpu/xid.h); sorted by code. The last column is dcgm-exporter's wording
// of the same code (its internal/pkg/collector/xid_errors.go, 4.5), which --compat dcgm puts
// in err_msg so that alert rules matching on it keep working.
constexpr std::array kXids{
    XidRow{13, XidClass::kApplication, "graphics engine exception", "Graphics Engine Exception"},
    XidRow{31, XidClass::kApplication, "GPU memory page fault", "GPU memory page fault"},
    XidRow{43, XidClass::kApplication, "GPU stopped processing (user application fault)",
           "GPU stopped processing"},
    XidRow{45, XidClass::kApplication, "preemptive cleanup",
           "Preemptive cleanup, due to previous errors -- Most likely to see when running multiple "
           "cuda"},
    XidRow{48, XidClass::kHardware, "double-bit ECC error", "Double Bit ECC Error"},
    XidRow{63, XidClass::kHardware, "row remapping / ECC page retirement",
           "ECC page retirement or row remapping recording event"},
    XidRow{64, XidClass::kHardware, "row remapping / ECC page retirement failure",
           "ECC page retirement or row remapper recording failure"},
    XidRow{74, XidClass::kHardware, "NVLink error", "NVLINK Error"},
    XidRow{79, XidClass::kHardware, "GPU has fallen off the bus", "GPU has fallen off the bus"},
    XidRow{92, XidClass::kHardware, "high single-bit ECC error rate",
           "High single-bit ECC error rate"},
    XidRow{94, XidClass::kHardware, "contained ECC error", "Contained ECC error"},
    XidRow{95, XidClass::kHardware, "uncontained ECC error", "Uncontained ECC error"},
    XidRow{119, XidClass::kHardware, "GSP RPC timeout", "GSP RPC Timeout"},
    XidRow{120, XidClass::kHardware, "GSP error", "GSP Error"},
};

}  // namespace

XidInfo xid_info(std::uint64_t code) {
  for (const auto& r : kXids)
    if (r.code == code) return {r.xid_class, r.meaning, r.dcgm_name};
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
