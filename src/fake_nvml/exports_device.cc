// SPDX-License-Identifier: MIT
// C exports: static facts and single-value readings of one device.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>

#include "fake_nvml/runtime.h"

using gpumon::fake::copy_string;
using gpumon::fake::device_call;
using gpumon::fake::DeviceState;
using gpumon::fake::Field;

namespace {

// One field as an unsigned integer of NVML's width.
template <typename T>
nvmlReturn_t read_field(DeviceState& d, Field f, double t, T* out) {
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  double v = 0;
  const nvmlReturn_t rc = d.read(f, t, &v);
  if (rc == NVML_SUCCESS) {
    *out = static_cast<T>(gpumon::fake::to_unsigned(v, std::numeric_limits<T>::max()));
  }
  return rc;
}

template <typename T>
nvmlReturn_t single(int symbol, nvmlDevice_t device, Field f, T* out) {
  return device_call(symbol, device,
                     [&](DeviceState& d, double t) { return read_field(d, f, t, out); });
}

nvmlReturn_t string_fact(int symbol, nvmlDevice_t device, Field f, char* buf, unsigned int length,
                         const std::string gpumon::fake::DeviceSpec::*member) {
  return device_call(symbol, device, [&](DeviceState& d, double t) {
    if (buf == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const nvmlReturn_t rc = d.check(f, symbol, t);
    return rc != NVML_SUCCESS ? rc : copy_string(d.spec->*member, buf, length);
  });
}

nvmlReturn_t pci_info(int symbol, nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return device_call(symbol, device, [&](DeviceState& d, double t) {
    if (pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (const nvmlReturn_t rc = d.check(Field::kPciInfo, symbol, t); rc != NVML_SUCCESS) return rc;
    const auto& s = *d.spec;
    *pci = nvmlPciInfo_t{};
    std::snprintf(pci->busId, sizeof pci->busId, "%s", s.pci_bus_id.c_str());
    std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0",
                  s.pci_domain & 0xFFFFU, s.pci_bus, s.pci_device);
    pci->domain = s.pci_domain;
    pci->bus = s.pci_bus;
    pci->device = s.pci_device;
    pci->pciDeviceId = s.pci_device_id;
    pci->pciSubSystemId = s.pci_subsystem_id;
    return NVML_SUCCESS;
  });
}

// v1 reports the driver's reserve as used, as NVML does: free = total - used either way.
nvmlReturn_t memory(int symbol, nvmlDevice_t device, nvmlMemory_v2_t* out) {
  return device_call(symbol, device, [&](DeviceState& d, double t) {
    std::uint64_t used = 0;
    const nvmlReturn_t rc = read_field(d, Field::kMemoryUsedBytes, t, &used);
    if (rc != NVML_SUCCESS) return rc;
    out->total = d.spec->memory_total_bytes;
    out->reserved = d.spec->memory_reserved_bytes;
    out->used = used;
    out->free = out->total - out->reserved - used;
    return NVML_SUCCESS;
  });
}

nvmlReturn_t clock_field(unsigned int type, Field* f) {
  switch (type) {
    case NVML_CLOCK_GRAPHICS: *f = Field::kGraphicsClockMhz; return NVML_SUCCESS;
    case NVML_CLOCK_SM: *f = Field::kSmClockMhz; return NVML_SUCCESS;
    case NVML_CLOCK_MEM: *f = Field::kMemClockMhz; return NVML_SUCCESS;
    case NVML_CLOCK_VIDEO: return NVML_ERROR_NOT_SUPPORTED;  // see video_clock()
  }
  return NVML_ERROR_INVALID_ARGUMENT;
}

// The video clock, static: only nvidia-smi -q shows it (fact kReportDetails). `symbol` is the
// caller's (GetClockInfo or GetMaxClockInfo), so a scenario's rule for either applies.
nvmlReturn_t video_clock(int symbol, DeviceState& d, double t, unsigned int* clock, bool max) {
  if (clock == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const nvmlReturn_t rc = d.check(Field::kReportDetails, symbol, t);
  if (rc == NVML_SUCCESS) *clock = max ? d.spec->max_video_clock_mhz : d.spec->video_clock_mhz;
  return rc;
}

nvmlReturn_t clock_reasons(int symbol, nvmlDevice_t device, unsigned long long* reasons) {
  return single(symbol, device, Field::kClockEventReasons, reasons);
}

}  // namespace

#define GPUMON_FAKE_SINGLE(symbol, type, field)                            \
  GPUMON_FAKE_EXPORT nvmlReturn_t symbol(nvmlDevice_t device, type* out) { \
    return single(GPUMON_FAKE_SYM(symbol), device, field, out);            \
  }
GPUMON_FAKE_SINGLE(nvmlDeviceGetPowerUsage, unsigned int, Field::kPowerDrawMw)
GPUMON_FAKE_SINGLE(nvmlDeviceGetEnforcedPowerLimit, unsigned int, Field::kPowerLimitMw)
GPUMON_FAKE_SINGLE(nvmlDeviceGetTotalEnergyConsumption, unsigned long long, Field::kEnergyMj)
GPUMON_FAKE_SINGLE(nvmlDeviceGetFanSpeed, unsigned int, Field::kFanSpeedPct)
GPUMON_FAKE_SINGLE(nvmlDeviceGetCurrPcieLinkGeneration, unsigned int, Field::kPcieLinkGen)
GPUMON_FAKE_SINGLE(nvmlDeviceGetCurrPcieLinkWidth, unsigned int, Field::kPcieLinkWidth)
GPUMON_FAKE_SINGLE(nvmlDeviceGetPcieReplayCounter, unsigned int, Field::kPcieReplayCount)
#undef GPUMON_FAKE_SINGLE

// Encoder and decoder: the percentage and the sampling period it covers (167 ms, as an H200).
#define GPUMON_FAKE_CODEC(symbol, field)                                                 \
  GPUMON_FAKE_EXPORT nvmlReturn_t symbol(nvmlDevice_t device, unsigned int* utilization, \
                                         unsigned int* sampling_period_us) {             \
    return device_call(GPUMON_FAKE_SYM(symbol), device, [&](DeviceState& d, double t) {  \
      if (sampling_period_us == nullptr) return NVML_ERROR_INVALID_ARGUMENT;             \
      const nvmlReturn_t rc = read_field(d, field, t, utilization);                      \
      if (rc == NVML_SUCCESS) *sampling_period_us = 167000;                              \
      return rc;                                                                         \
    });                                                                                  \
  }
GPUMON_FAKE_CODEC(nvmlDeviceGetEncoderUtilization, Field::kEncoderUtilPct)
GPUMON_FAKE_CODEC(nvmlDeviceGetDecoderUtilization, Field::kDecoderUtilPct)
GPUMON_FAKE_CODEC(nvmlDeviceGetJpgUtilization, Field::kJpegUtilPct)
GPUMON_FAKE_CODEC(nvmlDeviceGetOfaUtilization, Field::kOfaUtilPct)
#undef GPUMON_FAKE_CODEC

// The margin follows the GPU's temperature: tlimit_c minus it.
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMarginTemperature(nvmlDevice_t device,
                                                               nvmlMarginTemperature_t* out) {
  const int symbol = GPUMON_FAKE_SYM(nvmlDeviceGetMarginTemperature);
  return device_call(symbol, device, [&](DeviceState& d, double t) {
    if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (out->version != gpumon::nvml::kMarginTemperatureV1Version) {
      return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    }
    if (const nvmlReturn_t rc = d.check(Field::kTemperatureLimits, symbol, t); rc != NVML_SUCCESS)
      return rc;
    unsigned temperature = 0;
    const nvmlReturn_t rc = read_field(d, Field::kTemperatureGpuC, t, &temperature);
    if (rc == NVML_SUCCESS)
      out->marginTemperature = d.spec->tlimit_c - static_cast<int>(temperature);
    return rc;
  });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device,
                                                            nvmlBAR1Memory_t* out) {
  const int symbol = GPUMON_FAKE_SYM(nvmlDeviceGetBAR1MemoryInfo);
  return device_call(symbol, device, [&](DeviceState& d, double t) {
    if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (const nvmlReturn_t rc = d.check(Field::kBar1Memory, symbol, t); rc != NVML_SUCCESS)
      return rc;
    out->bar1Total = d.spec->bar1_total_bytes;
    out->bar1Used = std::min(d.spec->bar1_used_bytes, d.spec->bar1_total_bytes);
    out->bar1Free = out->bar1Total - out->bar1Used;
    return NVML_SUCCESS;
  });
}

GPUMON_FAKE_EXPORT nvmlReturn_t
nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long* reasons) {
  return clock_reasons(GPUMON_FAKE_SYM(nvmlDeviceGetCurrentClocksEventReasons), device, reasons);
}
GPUMON_FAKE_EXPORT nvmlReturn_t
nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long* reasons) {
  return clock_reasons(GPUMON_FAKE_SYM(nvmlDeviceGetCurrentClocksThrottleReasons), device, reasons);
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index) {
  return device_call(GPUMON_FAKE_SYM(nvmlDeviceGetIndex), device, [&](DeviceState& d, double) {
    if (index == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *index = d.index;
    return NVML_SUCCESS;
  });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int* minor) {
  const int symbol = GPUMON_FAKE_SYM(nvmlDeviceGetMinorNumber);
  return device_call(symbol, device, [&](DeviceState& d, double t) {
    if (minor == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const nvmlReturn_t rc = d.check(Field::kMinorNumber, symbol, t);
    if (rc == NVML_SUCCESS) *minor = d.spec->minor_number;
    return rc;
  });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name,
                                                  unsigned int length) {
  return string_fact(GPUMON_FAKE_SYM(nvmlDeviceGetName), device, Field::kName, name, length,
                     &gpumon::fake::DeviceSpec::name);
}
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid,
                                                  unsigned int length) {
  return string_fact(GPUMON_FAKE_SYM(nvmlDeviceGetUUID), device, Field::kUuid, uuid, length,
                     &gpumon::fake::DeviceSpec::uuid);
}
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char* serial,
                                                    unsigned int length) {
  return string_fact(GPUMON_FAKE_SYM(nvmlDeviceGetSerial), device, Field::kSerial, serial, length,
                     &gpumon::fake::DeviceSpec::serial);
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return pci_info(GPUMON_FAKE_SYM(nvmlDeviceGetPciInfo_v3), device, pci);
}
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return pci_info(GPUMON_FAKE_SYM(nvmlDeviceGetPciInfo_v2), device, pci);
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t device, char* version,
                                                          unsigned int length) {
  return string_fact(GPUMON_FAKE_SYM(nvmlDeviceGetVbiosVersion), device, Field::kVbiosVersion,
                     version, length, &gpumon::fake::DeviceSpec::vbios_version);
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device,
                                                         nvmlComputeMode_t* mode) {
  const int symbol = GPUMON_FAKE_SYM(nvmlDeviceGetComputeMode);
  return device_call(symbol, device, [&](DeviceState& d, double t) {
    if (mode == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const nvmlReturn_t rc = d.check(Field::kComputeMode, symbol, t);
    if (rc == NVML_SUCCESS) *mode = static_cast<nvmlComputeMode_t>(d.spec->compute_mode);
    return rc;
  });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* current,
                                                     unsigned int* pending) {
  const int symbol = GPUMON_FAKE_SYM(nvmlDeviceGetMigMode);
  return device_call(symbol, device, [&](DeviceState& d, double t) {
    if (current == nullptr || pending == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const nvmlReturn_t rc = d.check(Field::kMigMode, symbol, t);
    if (rc == NVML_SUCCESS) {
      *current = d.spec->mig_mode_current ? 1U : 0U;
      *pending = d.spec->mig_mode_pending ? 1U : 0U;
    }
    return rc;
  });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetInforomImageVersion(nvmlDevice_t device, char* version,
                                                                 unsigned int length) {
  return string_fact(GPUMON_FAKE_SYM(nvmlDeviceGetInforomImageVersion), device,
                     Field::kInforomImage, version, length,
                     &gpumon::fake::DeviceSpec::inforom_image_version);
}

// The board's identity: one unsigned fact each, under the scenario facts of their field.
#define GPUMON_FAKE_UNSIGNED_FACT(symbol, field, value)                            \
  GPUMON_FAKE_EXPORT nvmlReturn_t symbol(nvmlDevice_t device, unsigned int* out) { \
    const int id = GPUMON_FAKE_SYM(symbol);                                        \
    return device_call(id, device, [&](DeviceState& d, double t) {                 \
      if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;                      \
      const nvmlReturn_t rc = d.check(field, id, t);                               \
      if (rc == NVML_SUCCESS) *out = (value);                                      \
      return rc;                                                                   \
    });                                                                            \
  }
GPUMON_FAKE_UNSIGNED_FACT(nvmlDeviceGetBrand, Field::kBoardIdentity, d.spec->brand)
GPUMON_FAKE_UNSIGNED_FACT(nvmlDeviceGetArchitecture, Field::kBoardIdentity, d.spec->architecture)
GPUMON_FAKE_UNSIGNED_FACT(nvmlDeviceGetBoardId, Field::kBoardIdentity, d.spec->board_id)
GPUMON_FAKE_UNSIGNED_FACT(nvmlDeviceGetModuleId, Field::kBoardIdentity, d.spec->module_id)
GPUMON_FAKE_UNSIGNED_FACT(nvmlDeviceGetMultiGpuBoard, Field::kBoardIdentity,
                          d.spec->multi_gpu_board ? 1U : 0U)
GPUMON_FAKE_UNSIGNED_FACT(nvmlDeviceGetVirtualizationMode, Field::kVirtualizationMode,
                          d.spec->virtualization_mode)
GPUMON_FAKE_UNSIGNED_FACT(nvmlDeviceGetAccountingBufferSize, Field::kAccountingBufferSize,
                          d.spec->accounting_buffer_size)
#undef GPUMON_FAKE_UNSIGNED_FACT

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetBoardPartNumber(nvmlDevice_t device, char* number,
                                                             unsigned int length) {
  return string_fact(GPUMON_FAKE_SYM(nvmlDeviceGetBoardPartNumber), device, Field::kBoardIdentity,
                     number, length, &gpumon::fake::DeviceSpec::board_part_number);
}

// No length: NVML's buffer is NVML_GSP_FIRMWARE_VERSION_BUF_SIZE. A GPU without GSP firmware
// (an empty version) answers NOT_SUPPORTED.
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGspFirmwareVersion(nvmlDevice_t device,
                                                                char* version) {
  const int id = GPUMON_FAKE_SYM(nvmlDeviceGetGspFirmwareVersion);
  return device_call(id, device, [&](DeviceState& d, double t) {
    if (version == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const nvmlReturn_t rc = d.check(Field::kGspFirmware, id, t);
    if (rc != NVML_SUCCESS) return rc;
    if (d.spec->gsp_firmware_version.empty()) return NVML_ERROR_NOT_SUPPORTED;
    return copy_string(d.spec->gsp_firmware_version, version,
                       gpumon::nvml::kGspFirmwareVersionBufferSize);
  });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetInforomVersion(nvmlDevice_t device,
                                                            unsigned int object, char* version,
                                                            unsigned int length) {
  const int id = GPUMON_FAKE_SYM(nvmlDeviceGetInforomVersion);
  return device_call(id, device, [&](DeviceState& d, double t) {
    if (version == nullptr || object > gpumon::nvml::kInforomPower)
      return NVML_ERROR_INVALID_ARGUMENT;
    const nvmlReturn_t rc = d.check(Field::kInforomObjects, id, t);
    if (rc != NVML_SUCCESS) return rc;
    const std::string& v = object == gpumon::nvml::kInforomOem   ? d.spec->inforom_oem_version
                           : object == gpumon::nvml::kInforomEcc ? d.spec->inforom_ecc_version
                                                                 : d.spec->inforom_power_version;
    return v.empty() ? NVML_ERROR_NOT_SUPPORTED : copy_string(v, version, length);
  });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPciInfoExt(nvmlDevice_t device,
                                                        nvmlPciInfoExt_v1_t* pci) {
  const int id = GPUMON_FAKE_SYM(nvmlDeviceGetPciInfoExt);
  return device_call(id, device, [&](DeviceState& d, double t) {
    if (pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (pci->version != gpumon::nvml::kPciInfoExtV1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    for (Field f : {Field::kPciInfo, Field::kPciClass})
      if (const nvmlReturn_t rc = d.check(f, id, t); rc != NVML_SUCCESS) return rc;
    const auto& s = *d.spec;
    *pci = nvmlPciInfoExt_v1_t{};
    pci->version = gpumon::nvml::kPciInfoExtV1;
    std::snprintf(pci->busId, sizeof pci->busId, "%s", s.pci_bus_id.c_str());
    pci->domain = s.pci_domain;
    pci->bus = s.pci_bus;
    pci->device = s.pci_device;
    pci->pciDeviceId = s.pci_device_id;
    pci->pciSubSystemId = s.pci_subsystem_id;
    pci->baseClass = s.pci_base_class;
    pci->subClass = s.pci_sub_class;
    return NVML_SUCCESS;
  });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetAddressingMode(nvmlDevice_t device,
                                                            nvmlDeviceAddressingMode_t* mode) {
  const int id = GPUMON_FAKE_SYM(nvmlDeviceGetAddressingMode);
  return device_call(id, device, [&](DeviceState& d, double t) {
    if (mode == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (mode->version != gpumon::nvml::kDeviceAddressingModeV1)
      return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    const nvmlReturn_t rc = d.check(Field::kAddressingMode, id, t);
    if (rc == NVML_SUCCESS) mode->value = d.spec->addressing_mode;
    return rc;
  });
}

#define GPUMON_FAKE_ENABLED(symbol, field, member)                                      \
  GPUMON_FAKE_EXPORT nvmlReturn_t symbol(nvmlDevice_t device, nvmlEnableState_t* out) { \
    const int id = GPUMON_FAKE_SYM(symbol);                                             \
    return device_call(id, device, [&](DeviceState& d, double t) {                      \
      if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;                           \
      const nvmlReturn_t rc = d.check(field, id, t);                                    \
      if (rc == NVML_SUCCESS)                                                           \
        *out = d.spec->member ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;           \
      return rc;                                                                        \
    });                                                                                 \
  }
GPUMON_FAKE_ENABLED(nvmlDeviceGetPersistenceMode, Field::kPersistenceMode, persistence_mode)
GPUMON_FAKE_ENABLED(nvmlDeviceGetDisplayActive, Field::kDisplayActive, display_active)
GPUMON_FAKE_ENABLED(nvmlDeviceGetAccountingMode, Field::kAccountingMode, accounting_mode)
GPUMON_FAKE_ENABLED(nvmlDeviceGetDisplayMode, Field::kDisplayMode, display_mode)
#undef GPUMON_FAKE_ENABLED

// The PCIe link calls share one scenario fact, "pcie_link".
#define GPUMON_FAKE_PCIE_LINK(symbol, member)                                      \
  GPUMON_FAKE_EXPORT nvmlReturn_t symbol(nvmlDevice_t device, unsigned int* out) { \
    const int id = GPUMON_FAKE_SYM(symbol);                                        \
    return device_call(id, device, [&](DeviceState& d, double t) {                 \
      if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;                      \
      const nvmlReturn_t rc = d.check(Field::kPcieLink, id, t);                    \
      if (rc == NVML_SUCCESS) *out = d.spec->member;                               \
      return rc;                                                                   \
    });                                                                            \
  }
GPUMON_FAKE_PCIE_LINK(nvmlDeviceGetMaxPcieLinkGeneration, pcie_link_gen_max)
GPUMON_FAKE_PCIE_LINK(nvmlDeviceGetGpuMaxPcieLinkGeneration, pcie_link_gen_gpu_max)
GPUMON_FAKE_PCIE_LINK(nvmlDeviceGetMaxPcieLinkWidth, pcie_link_width_max)
#undef GPUMON_FAKE_PCIE_LINK

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device,
                                                           nvmlMemory_v2_t* mem) {
  if (mem != nullptr && mem->version != gpumon::nvml::kMemoryV2Version) {
    return device_call(GPUMON_FAKE_SYM(nvmlDeviceGetMemoryInfo_v2), device,
                       [](DeviceState&, double) { return NVML_ERROR_ARGUMENT_VERSION_MISMATCH; });
  }
  nvmlMemory_v2_t scratch{};
  nvmlMemory_v2_t* target = mem != nullptr ? mem : &scratch;
  const nvmlReturn_t rc = memory(GPUMON_FAKE_SYM(nvmlDeviceGetMemoryInfo_v2), device, target);
  return mem == nullptr && rc == NVML_SUCCESS ? NVML_ERROR_INVALID_ARGUMENT : rc;
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* mem) {
  nvmlMemory_v2_t v2{};
  const nvmlReturn_t rc = memory(GPUMON_FAKE_SYM(nvmlDeviceGetMemoryInfo), device, &v2);
  if (rc != NVML_SUCCESS) return rc;
  if (mem == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  mem->total = v2.total;
  mem->used = v2.used + v2.reserved;
  mem->free = v2.free;
  return NVML_SUCCESS;
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
                                                              nvmlUtilization_t* util) {
  return device_call(GPUMON_FAKE_SYM(nvmlDeviceGetUtilizationRates), device,
                     [&](DeviceState& d, double t) {
                       if (util == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
                       nvmlUtilization_t u{};
                       nvmlReturn_t rc = read_field(d, Field::kUtilizationGpuPct, t, &u.gpu);
                       if (rc == NVML_SUCCESS)
                         rc = read_field(d, Field::kUtilizationMemoryPct, t, &u.memory);
                       if (rc == NVML_SUCCESS) *util = u;
                       return rc;
                     });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, unsigned int sensor,
                                                         unsigned int* temp) {
  return device_call(GPUMON_FAKE_SYM(nvmlDeviceGetTemperature), device,
                     [&](DeviceState& d, double t) {
                       if (sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
                       return read_field(d, Field::kTemperatureGpuC, t, temp);
                     });
}

// The management limit is the scenario's static power limit; the enforced one may vary.
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device,
                                                                  unsigned int* limit) {
  const int symbol = GPUMON_FAKE_SYM(nvmlDeviceGetPowerManagementLimit);
  return device_call(symbol, device, [&](DeviceState& d, double t) {
    if (limit == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const nvmlReturn_t rc = d.check(Field::kPowerLimitMw, symbol, t);
    if (rc == NVML_SUCCESS) *limit = d.spec->power_limit_mw;
    return rc;
  });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, unsigned int type,
                                                       unsigned int* clock) {
  return device_call(
      GPUMON_FAKE_SYM(nvmlDeviceGetClockInfo), device, [&](DeviceState& d, double t) {
        if (type == NVML_CLOCK_VIDEO)
          return video_clock(GPUMON_FAKE_SYM(nvmlDeviceGetClockInfo), d, t, clock, false);
        Field f{};
        const nvmlReturn_t rc = clock_field(type, &f);
        return rc != NVML_SUCCESS ? rc : read_field(d, f, t, clock);
      });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, unsigned int type,
                                                          unsigned int* clock) {
  const int symbol = GPUMON_FAKE_SYM(nvmlDeviceGetMaxClockInfo);
  return device_call(symbol, device, [&](DeviceState& d, double t) {
    if (type == NVML_CLOCK_VIDEO) return video_clock(symbol, d, t, clock, true);
    Field f{};
    nvmlReturn_t rc = clock_field(type, &f);
    if (rc == NVML_SUCCESS && clock == nullptr) rc = NVML_ERROR_INVALID_ARGUMENT;
    if (rc == NVML_SUCCESS) rc = d.check(Field::kMaxClocks, symbol, t);
    if (rc != NVML_SUCCESS) return rc;
    const auto& s = *d.spec;
    *clock = f == Field::kSmClockMhz    ? s.max_sm_clock_mhz
             : f == Field::kMemClockMhz ? s.max_mem_clock_mhz
                                        : s.max_graphics_clock_mhz;
    return NVML_SUCCESS;
  });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device,
                                                                         unsigned int* limit) {
  const int symbol = GPUMON_FAKE_SYM(nvmlDeviceGetPowerManagementDefaultLimit);
  return device_call(symbol, device, [&](DeviceState& d, double t) {
    if (limit == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const nvmlReturn_t rc = d.check(Field::kPowerLimits, symbol, t);
    if (rc == NVML_SUCCESS) *limit = d.spec->power_default_limit_mw;
    return rc;
  });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(
    nvmlDevice_t device, unsigned int* min_limit, unsigned int* max_limit) {
  const int symbol = GPUMON_FAKE_SYM(nvmlDeviceGetPowerManagementLimitConstraints);
  return device_call(symbol, device, [&](DeviceState& d, double t) {
    if (min_limit == nullptr || max_limit == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const nvmlReturn_t rc = d.check(Field::kPowerLimits, symbol, t);
    if (rc == NVML_SUCCESS)
      *min_limit = d.spec->power_min_limit_mw, *max_limit = d.spec->power_max_limit_mw;
    return rc;
  });
}

// Graphics and memory only, as on real GPUs (SM and video: invalid argument).
#define GPUMON_FAKE_APP_CLOCK(symbol, graphics, memory)                                \
  GPUMON_FAKE_EXPORT nvmlReturn_t symbol(nvmlDevice_t device, unsigned int type,       \
                                         unsigned int* clock) {                        \
    const int id = GPUMON_FAKE_SYM(symbol);                                            \
    return device_call(id, device, [&](DeviceState& d, double t) {                     \
      if (clock == nullptr || (type != NVML_CLOCK_GRAPHICS && type != NVML_CLOCK_MEM)) \
        return NVML_ERROR_INVALID_ARGUMENT;                                            \
      const nvmlReturn_t rc = d.check(Field::kApplicationsClocks, id, t);              \
      if (rc == NVML_SUCCESS)                                                          \
        *clock = type == NVML_CLOCK_GRAPHICS ? d.spec->graphics : d.spec->memory;      \
      return rc;                                                                       \
    });                                                                                \
  }
GPUMON_FAKE_APP_CLOCK(nvmlDeviceGetApplicationsClock, applications_graphics_clock_mhz,
                      applications_mem_clock_mhz)
GPUMON_FAKE_APP_CLOCK(nvmlDeviceGetDefaultApplicationsClock,
                      default_applications_graphics_clock_mhz, default_applications_mem_clock_mhz)
#undef GPUMON_FAKE_APP_CLOCK

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device,
                                                              nvmlPstates_t* pstate) {
  return device_call(
      GPUMON_FAKE_SYM(nvmlDeviceGetPerformanceState), device, [&](DeviceState& d, double t) {
        unsigned int p = 0;
        const nvmlReturn_t rc = read_field(d, Field::kPstate, t, pstate == nullptr ? nullptr : &p);
        if (rc == NVML_SUCCESS)
          *pstate = p <= 15 ? static_cast<nvmlPstates_t>(p) : NVML_PSTATE_UNKNOWN;
        return rc;
      });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device,
                                                     nvmlEnableState_t* current,
                                                     nvmlEnableState_t* pending) {
  const int symbol = GPUMON_FAKE_SYM(nvmlDeviceGetEccMode);
  return device_call(symbol, device, [&](DeviceState& d, double t) {
    if (current == nullptr || pending == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const nvmlReturn_t rc = d.check(Field::kEccMode, symbol, t);
    if (rc != NVML_SUCCESS) return rc;
    const auto state = [](bool on) { return on ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED; };
    *current = state(d.spec->ecc_enabled);
    *pending = state(d.spec->ecc_pending.value_or(d.spec->ecc_enabled));
    return NVML_SUCCESS;
  });
}

// Volatile and aggregate counters read the same series; with ECC off there are no counters.
// Enum parameters are taken as unsigned int (same ABI): callers may pass any value.
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, unsigned int type,
                                                            unsigned int counter,
                                                            unsigned long long* count) {
  return device_call(
      GPUMON_FAKE_SYM(nvmlDeviceGetTotalEccErrors), device, [&](DeviceState& d, double t) {
        if (type > NVML_MEMORY_ERROR_TYPE_UNCORRECTED || counter > NVML_AGGREGATE_ECC) {
          return NVML_ERROR_INVALID_ARGUMENT;
        }
        if (!d.spec->ecc_enabled) return NVML_ERROR_NOT_SUPPORTED;
        const Field f = type == NVML_MEMORY_ERROR_TYPE_CORRECTED ? Field::kEccCorrectedVolatile
                                                                 : Field::kEccUncorrectedVolatile;
        return read_field(d, f, t, count);
      });
}
