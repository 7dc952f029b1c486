// SPDX-License-Identifier: MIT
// C exports: init and shutdown, system facts, device enumeration, error strings and the test
// hooks (gpumonFake*).
#include <cctype>
#include <cstdio>
#include <string>

#include "fake_nvml/runtime.h"

using gpumon::fake::device_call;
using gpumon::fake::DeviceState;
using gpumon::fake::Field;
using gpumon::fake::Latency;
using gpumon::fake::Runtime;
using gpumon::fake::system_call;

namespace {

nvmlReturn_t init_impl(int symbol) {
  Runtime& rt = Runtime::get();
  rt.count(symbol);
  Latency latency;
  nvmlReturn_t rc = NVML_ERROR_UNKNOWN;
  try {
    std::lock_guard<std::mutex> lock(rt.mutex());
    rc = rt.init(&latency);
  } catch (...) {
    rc = NVML_ERROR_UNKNOWN;
  }
  latency.apply();
  return rc;
}

nvmlReturn_t count_impl(int symbol, unsigned int* count) {
  return system_call(symbol, [&](Runtime& rt) {
    if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *count = rt.device_count();
    return NVML_SUCCESS;
  });
}

// Handles of a lost GPU cannot be had: the lookup answers GPU_IS_LOST, as NVML does.
template <typename Match>
nvmlReturn_t find_device(int symbol, nvmlDevice_t* device, nvmlReturn_t not_found, Match match) {
  return system_call(symbol, [&](Runtime& rt) {
    if (device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < rt.device_count(); ++i) {
      DeviceState* d = rt.device(i);
      if (!match(*d)) continue;
      Latency ignored;
      const nvmlReturn_t rc = rt.gate(*d, symbol, rt.now_s(), &ignored);
      if (rc == NVML_SUCCESS) *device = Runtime::handle(i);
      return rc;
    }
    return not_found;
  });
}

nvmlReturn_t handle_by_index_impl(int symbol, unsigned int index, nvmlDevice_t* device) {
  return find_device(symbol, device, NVML_ERROR_INVALID_ARGUMENT,
                     [&](const DeviceState& d) { return d.index == index; });
}

// Bus ids compare as numbers, so "0000:18:00.0" finds "00000000:18:00.0".
nvmlReturn_t handle_by_pci_impl(int symbol, const char* bus_id, nvmlDevice_t* device) {
  if (bus_id == nullptr)
    return system_call(symbol, [](Runtime&) { return NVML_ERROR_INVALID_ARGUMENT; });
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  const bool parsed = std::sscanf(bus_id, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) == 4;
  return find_device(symbol, device, NVML_ERROR_NOT_FOUND, [&](const DeviceState& d) {
    return parsed && d.spec->pci_domain == domain && d.spec->pci_bus == bus &&
           d.spec->pci_device == dev;
  });
}

nvmlReturn_t system_string(int symbol, char* buf, unsigned int length,
                           const std::string gpumon::fake::Scenario::*member) {
  return system_call(symbol, [&](Runtime& rt) {
    return gpumon::fake::copy_string(rt.scenario().*member, buf, length);
  });
}

nvmlReturn_t cuda_version_impl(int symbol, int* version) {
  return system_call(symbol, [&](Runtime& rt) {
    if (version == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *version = rt.scenario().cuda_driver_version;
    return NVML_SUCCESS;
  });
}

}  // namespace

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlInit_v2(void) {
  return init_impl(GPUMON_FAKE_SYM(nvmlInit_v2));
}
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlInit(void) {
  return init_impl(GPUMON_FAKE_SYM(nvmlInit));
}
// pynvml's nvmlInit(); no flag changes what the fake does.
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int /*flags*/) {
  return init_impl(GPUMON_FAKE_SYM(nvmlInitWithFlags));
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlShutdown(void) {
  Runtime& rt = Runtime::get();
  rt.count(GPUMON_FAKE_SYM(nvmlShutdown));
  std::lock_guard<std::mutex> lock(rt.mutex());
  return rt.shutdown();
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  return count_impl(GPUMON_FAKE_SYM(nvmlDeviceGetCount_v2), count);
}
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) {
  return count_impl(GPUMON_FAKE_SYM(nvmlDeviceGetCount), count);
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
                                                              nvmlDevice_t* device) {
  return handle_by_index_impl(GPUMON_FAKE_SYM(nvmlDeviceGetHandleByIndex_v2), index, device);
}
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index,
                                                           nvmlDevice_t* device) {
  return handle_by_index_impl(GPUMON_FAKE_SYM(nvmlDeviceGetHandleByIndex), index, device);
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  const int symbol = GPUMON_FAKE_SYM(nvmlDeviceGetHandleByUUID);
  if (uuid == nullptr)
    return system_call(symbol, [](Runtime&) { return NVML_ERROR_INVALID_ARGUMENT; });
  return find_device(symbol, device, NVML_ERROR_NOT_FOUND,
                     [&](const DeviceState& d) { return d.spec->uuid == uuid; });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id,
                                                                 nvmlDevice_t* device) {
  return handle_by_pci_impl(GPUMON_FAKE_SYM(nvmlDeviceGetHandleByPciBusId_v2), bus_id, device);
}
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char* bus_id,
                                                              nvmlDevice_t* device) {
  return handle_by_pci_impl(GPUMON_FAKE_SYM(nvmlDeviceGetHandleByPciBusId), bus_id, device);
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  return system_string(GPUMON_FAKE_SYM(nvmlSystemGetDriverVersion), version, length,
                       &gpumon::fake::Scenario::driver_version);
}
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
  return system_string(GPUMON_FAKE_SYM(nvmlSystemGetNVMLVersion), version, length,
                       &gpumon::fake::Scenario::nvml_version);
}
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* version) {
  return cuda_version_impl(GPUMON_FAKE_SYM(nvmlSystemGetCudaDriverVersion_v2), version);
}
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* version) {
  return cuda_version_impl(GPUMON_FAKE_SYM(nvmlSystemGetCudaDriverVersion), version);
}

// Names of processes on any device of the scenario (running or not).
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char* name,
                                                         unsigned int length) {
  return system_call(GPUMON_FAKE_SYM(nvmlSystemGetProcessName), [&](Runtime& rt) {
    if (name == nullptr || length == 0) return NVML_ERROR_INVALID_ARGUMENT;
    for (const auto& device : rt.scenario().devices) {
      for (const auto& p : device.processes) {
        if (p.pid == pid) return gpumon::fake::copy_string(p.name, name, length);
      }
    }
    return NVML_ERROR_NOT_FOUND;
  });
}

GPUMON_FAKE_EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  Runtime::get().count(GPUMON_FAKE_SYM(nvmlErrorString));
  switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_ALREADY_INITIALIZED: return "Already Initialized";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_INSUFFICIENT_POWER: return "Insufficient External Power";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT: return "Timeout";
    case NVML_ERROR_IRQ_ISSUE: return "Interrupt Request Issue";
    case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML Shared Library Not Found";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
    case NVML_ERROR_CORRUPTED_INFOROM: return "Corrupted infoROM";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    case NVML_ERROR_RESET_REQUIRED: return "GPU requires restart";
    case NVML_ERROR_OPERATING_SYSTEM: return "The operating system has blocked the request.";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "RM has detected an NVML/RM version mismatch.";
    case NVML_ERROR_IN_USE: return "In use by another client";
    case NVML_ERROR_MEMORY: return "Insufficient Memory";
    case NVML_ERROR_NO_DATA: return "No data";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "Argument version mismatch";
    case NVML_ERROR_NOT_READY: return "Not Ready";
    case NVML_ERROR_GPU_NOT_FOUND: return "GPU not found";
    default: return "Unknown Error";
  }
}

// Test hooks.
GPUMON_FAKE_EXPORT const char* gpumonFakeScenarioName(void) {
  Runtime& rt = Runtime::get();
  try {
    std::lock_guard<std::mutex> lock(rt.mutex());
    return rt.scenario_name();
  } catch (...) {
    return "unnamed";
  }
}

GPUMON_FAKE_EXPORT unsigned long long gpumonFakeCallCount(const char* symbol) {
  return Runtime::get().count_of(symbol);
}

GPUMON_FAKE_EXPORT void gpumonFakeResetCounts(void) {
  Runtime::get().reset_counts();
}

// Scenario time stands at `scenario_s` from now on (until nvmlInit loads the scenario again):
// tests step time instead of sleeping. Event waits wake to look at the new time.
GPUMON_FAKE_EXPORT void gpumonFakeSetTime(double scenario_s) {
  Runtime& rt = Runtime::get();
  std::lock_guard<std::mutex> lock(rt.mutex());
  rt.hold_time(scenario_s);
}
