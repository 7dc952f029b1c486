// SPDX-License-Identifier: MIT
#include "nvml/nvml_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <initializer_list>

namespace gpumon::nvml {
namespace {

// Resolves the first of `names` that the library exports; returns its index or -1.
int resolve(void* handle, std::initializer_list<const char*> names, void** out) {
  int index = 0;
  for (const char* name : names) {
    dlerror();
    void* sym = dlsym(handle, name);
    if (sym != nullptr) {
      *out = sym;
      return index;
    }
    ++index;
  }
  *out = nullptr;
  return -1;
}

}  // namespace

std::unique_ptr<NvmlLibrary> NvmlLibrary::load(std::string path, LoadError* error) {
  if (path.empty()) {
    const char* env = std::getenv(std::string(kLibraryEnv).c_str());
    path = (env != nullptr && *env != '\0') ? env : std::string(kDefaultLibrary);
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    if (error != nullptr) {
      error->kind = LoadError::Kind::kLibraryNotFound;
      error->message = "cannot load NVML (" + path + "): " + (why != nullptr ? why : "unknown") +
                       ". Is the NVIDIA driver installed? Set " + std::string(kLibraryEnv) +
                       " to the path of libnvidia-ml.so.1 if it lives elsewhere.";
    }
    return nullptr;
  }

  std::unique_ptr<NvmlLibrary> lib(new NvmlLibrary());
  lib->handle_ = handle;
  lib->path_ = path;
  std::string missing;
  int process_symbol = -1;

#define GPUMON_NVML_RESOLVE(member, required, ...)                                            \
  {                                                                                           \
    void* sym = nullptr;                                                                      \
    const int index = resolve(handle, {__VA_ARGS__}, &sym);                                   \
    std::initializer_list<const char*> names = {__VA_ARGS__};                                 \
    lib->fn_.member = {reinterpret_cast<decltype(lib->fn_.member)::Pointer>(sym),             \
                       index >= 0 ? names.begin()[index] : nullptr};                          \
    lib->symbols_.push_back(                                                                  \
        {#member, index >= 0 ? std::string(names.begin()[index]) : std::string(), required}); \
    if (index < 0 && (required))                                                              \
      missing += std::string(missing.empty() ? "" : ", ") + *names.begin();                   \
    if (std::string_view(#member) == "device_get_compute_running_processes")                  \
      process_symbol = index;                                                                 \
  }
#define GPUMON_NVML_REQUIRED(member, ret, params, ...) \
  GPUMON_NVML_RESOLVE(member, true, __VA_ARGS__)
#define GPUMON_NVML_OPTIONAL(member, ret, params, ...) \
  GPUMON_NVML_RESOLVE(member, false, __VA_ARGS__)
#include "nvml/nvml_entry_points.inc"
#undef GPUMON_NVML_REQUIRED
#undef GPUMON_NVML_OPTIONAL
#undef GPUMON_NVML_RESOLVE

  if (!missing.empty()) {
    if (error != nullptr) {
      error->kind = LoadError::Kind::kMissingRequiredSymbol;
      error->message = path + " is not a usable NVML library: it lacks " + missing +
                       ". Update the NVIDIA driver, or point " + std::string(kLibraryEnv) +
                       " at the driver's libnvidia-ml.so.1.";
    }
    return nullptr;
  }

  switch (process_symbol) {
    case 0:  // _v3: the struct grew and shrank again; nvitop's rule tells the generations apart.
      lib->process_layout_ = (lib->fn_.device_get_conf_compute_mem_size_info != nullptr &&
                              lib->fn_.device_get_running_process_detail_list == nullptr)
                                 ? ProcessInfoLayout::kV3
                                 : ProcessInfoLayout::kV2;
      break;
    case 1: lib->process_layout_ = ProcessInfoLayout::kV2; break;
    case 2: lib->process_layout_ = ProcessInfoLayout::kV1; break;
    default: lib->process_layout_ = ProcessInfoLayout::kNone;
  }

  if (auto* name = reinterpret_cast<const char* (*)()>(dlsym(handle, "gpumonFakeScenarioName"))) {
    const char* scenario = name();
    lib->simulated_scenario_ = (scenario != nullptr && *scenario != '\0') ? scenario : "unnamed";
  }
  return lib;
}

NvmlLibrary::~NvmlLibrary() {
  // Deliberately no dlclose: NVML keeps threads and atexit handlers that may outlive us.
}

std::string NvmlLibrary::error_string(nvmlReturn_t rc) const {
  if (fn_.error_string != nullptr) {
    if (const char* s = fn_.error_string(rc); s != nullptr) return s;
  }
  return std::string(return_code_name(rc));
}

std::string_view return_code_name(nvmlReturn_t rc) {
  switch (rc) {
    case NVML_SUCCESS: return "SUCCESS";
    case NVML_ERROR_UNINITIALIZED: return "UNINITIALIZED";
    case NVML_ERROR_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case NVML_ERROR_NOT_SUPPORTED: return "NOT_SUPPORTED";
    case NVML_ERROR_NO_PERMISSION: return "NO_PERMISSION";
    case NVML_ERROR_ALREADY_INITIALIZED: return "ALREADY_INITIALIZED";
    case NVML_ERROR_NOT_FOUND: return "NOT_FOUND";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "INSUFFICIENT_SIZE";
    case NVML_ERROR_INSUFFICIENT_POWER: return "INSUFFICIENT_POWER";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "DRIVER_NOT_LOADED";
    case NVML_ERROR_TIMEOUT: return "TIMEOUT";
    case NVML_ERROR_IRQ_ISSUE: return "IRQ_ISSUE";
    case NVML_ERROR_LIBRARY_NOT_FOUND: return "LIBRARY_NOT_FOUND";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "FUNCTION_NOT_FOUND";
    case NVML_ERROR_CORRUPTED_INFOROM: return "CORRUPTED_INFOROM";
    case NVML_ERROR_GPU_IS_LOST: return "GPU_IS_LOST";
    case NVML_ERROR_RESET_REQUIRED: return "RESET_REQUIRED";
    case NVML_ERROR_OPERATING_SYSTEM: return "OPERATING_SYSTEM";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "LIB_RM_VERSION_MISMATCH";
    case NVML_ERROR_IN_USE: return "IN_USE";
    case NVML_ERROR_MEMORY: return "MEMORY";
    case NVML_ERROR_NO_DATA: return "NO_DATA";
    case NVML_ERROR_VGPU_ECC_NOT_SUPPORTED: return "VGPU_ECC_NOT_SUPPORTED";
    case NVML_ERROR_INSUFFICIENT_RESOURCES: return "INSUFFICIENT_RESOURCES";
    case NVML_ERROR_FREQ_NOT_SUPPORTED: return "FREQ_NOT_SUPPORTED";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "ARGUMENT_VERSION_MISMATCH";
    case NVML_ERROR_DEPRECATED: return "DEPRECATED";
    case NVML_ERROR_NOT_READY: return "NOT_READY";
    case NVML_ERROR_GPU_NOT_FOUND: return "GPU_NOT_FOUND";
    case NVML_ERROR_INVALID_STATE: return "INVALID_STATE";
    case NVML_ERROR_UNKNOWN: return "UNKNOWN";
  }
  return "UNKNOWN";
}

}  // namespace gpumon::nvml
