// SPDX-License-Identifier: MIT
// NvmlBackend: GpuBackend over NVML loaded at run time (the driver's library or gpumon's fake).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "gpu/gpu_backend.h"
#include "nvml/nvml_library.h"

namespace gpumon {

struct NvmlOpenOptions {
  std::string library_path;  ///< empty: GPUMON_NVML_LIBRARY, else libnvidia-ml.so.1
  /// How often a lost GPU is probed again (re-acquiring its handle). 0: on every sample.
  std::chrono::milliseconds lost_retry{5000};
};

struct NvmlOpenError {
  enum class Kind { kNoDriver, kBadLibrary, kInitFailed };
  Kind kind = Kind::kNoDriver;
  int nvml_code = 0;    ///< for kInitFailed
  std::string message;  ///< one line a user can act on
};

class NvmlBackend final : public GpuBackend {
 public:
  /// Loads and initialises NVML and reads every GPU's static facts. On failure returns nullptr
  /// and fills `error`.
  static std::unique_ptr<NvmlBackend> open(const NvmlOpenOptions& options, NvmlOpenError* error);
  ~NvmlBackend() override;

  const SystemInfo& system() const override { return system_; }
  unsigned device_count() const override { return static_cast<unsigned>(devices_.size()); }
  const DeviceStatic& device(unsigned index) const override { return devices_.at(index).info; }
  DeviceSample sample(unsigned index, MetricSet what) override;
  Reading<std::vector<GpuProcess>> processes(unsigned index) override;

  /// Time nvmlInit took, for `--debug` and benchmarks.
  std::chrono::microseconds init_duration() const { return init_duration_; }
  const nvml::NvmlLibrary& library() const { return *lib_; }

  /// Groups found unsupported on GPU `index` (never asked again).
  MetricSet unsupported(unsigned index) const { return devices_.at(index).unsupported; }

 private:
  struct Device {
    nvmlDevice_t handle = nullptr;
    DeviceStatic info;
    MetricSet unsupported;
    bool lost = false;
    bool details_loaded = false;    ///< read_static_details() ran
    bool memory_v2_broken = false;  ///< _v2 exists but rejects our struct: use v1
    std::chrono::steady_clock::time_point last_lost_probe{};
  };

  NvmlBackend() = default;
  void read_static(Device& d);
  void read_static_details(Device& d);
  bool probe_lost(Device& d);
  Missing note_failure(Device& d, MetricGroup group, nvmlReturn_t rc);
  void mark_lost(DeviceSample& s) const;
  void read_field_values(Device& d, MetricSet what, DeviceSample& s);

  std::unique_ptr<nvml::NvmlLibrary> lib_;
  SystemInfo system_;
  std::vector<Device> devices_;
  NvmlOpenOptions options_;
  std::chrono::microseconds init_duration_{0};
};

/// Missing reason for an NVML return code that is not SUCCESS.
Missing missing_from(nvmlReturn_t rc);

/// The message for an nvmlInit failure, naming what to do.
std::string init_failure_message(nvmlReturn_t rc, const std::string& nvml_text);

}  // namespace gpumon
