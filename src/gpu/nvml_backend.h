// SPDX-License-Identifier: MIT
// NvmlBackend: GpuBackend over NVML loaded at run time (the driver's library or gpumon's fake).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu/gpu_backend.h"
#include "nvml/nvml_library.h"

namespace gpumon {

struct NvmlOpenOptions {
  std::string library_path;  ///< empty: GPUMON_NVML_LIBRARY, else libnvidia-ml.so.1
  /// How often a lost GPU is probed again (re-acquiring its handle). 0: on every sample.
  std::chrono::milliseconds lost_retry{5000};
  /// The clock of the backend's own periods (the lost-GPU retry, the GPM window) and of its
  /// samples' mono_time; empty: std::chrono::steady_clock. Tests step it instead of sleeping.
  std::function<std::chrono::steady_clock::time_point()> now;
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
  // Implemented in nvml_extra_reads.cc.
  bool gpm_supported(unsigned index) override;
  Reading<GpmReading> read_gpm(unsigned index) override;
  Reading<DriverSamples> read_driver_samples(unsigned index, DriverBuffer which) override;
  Reading<std::vector<ProcessUtilization>> process_utilization(unsigned index) override;
  PcieThroughput pcie_throughput(unsigned index) override;
  ReportDetails report_details(unsigned index) override;  ///< nvml_report_details.cc
  void note_calls_in(std::atomic<const char*>* slot) override { nvml::t_call_slot = slot; }
  /// An EventWatcher over this backend's library (event_watcher.h); the backend must outlive it.
  std::unique_ptr<EventStream> watch_events(std::function<void(const GpuEvent&)> on_event) override;

  /// Time nvmlInit took, for `--debug` and benchmarks.
  std::chrono::microseconds init_duration() const { return init_duration_; }
  const nvml::NvmlLibrary& library() const { return *lib_; }

  /// Groups found unsupported on GPU `index` (never asked again).
  MetricSet unsupported(unsigned index) const { return devices_.at(index).unsupported; }

 private:
  /// Per-GPU state of the extra reads.
  struct Extras {
    enum class Gpm : std::uint8_t { kUnknown, kSupported, kUnsupported };
    Gpm gpm = Gpm::kUnknown;
    nvmlGpmSample_t gpm_prev = nullptr;  ///< the window's start, once gpm_have_prev
    nvmlGpmSample_t gpm_next = nullptr;
    bool gpm_have_prev = false;
    std::chrono::steady_clock::time_point gpm_prev_time{};
    std::array<unsigned long long, kDriverBufferCount> buffer_last_seen_us{};
    std::array<bool, kDriverBufferCount> buffer_unsupported{};
    /// Read buffers, sized by the driver's first answer and kept, so each read is one call
    /// (a size query costs as much as a read: about 0.8 ms on an H200).
    std::array<std::vector<nvmlSample_t>, kDriverBufferCount> buffer{};
    unsigned long long process_util_last_seen_us = 0;
    bool process_util_unsupported = false;
    bool pcie_unsupported = false;
  };

  struct Device {
    nvmlDevice_t handle = nullptr;
    DeviceStatic info;
    MetricSet unsupported;
    /// Batched field values found unsupported, by their index in the field table: a group is
    /// unsupported once every field of it is (a GPU may have the power-cap time and not
    /// the sync-boost time).
    std::uint32_t unsupported_fields = 0;
    bool lost = false;  ///< nvml::is_gpu_lost() from a call; probed again per lost_retry
    /// Why the GPU has no handle when it is not lost (GetHandleByIndex said no permission, a
    /// driver error, ...): every reading is missing for this reason; probed like a lost GPU.
    std::optional<Missing> unopened;
    bool details_loaded = false;    ///< read_static_details() ran
    bool memory_v2_broken = false;  ///< _v2 exists but rejects our struct: use v1
    std::chrono::steady_clock::time_point last_lost_probe{};
    Extras extras;
  };

  NvmlBackend() = default;
  std::chrono::steady_clock::time_point now() const {
    return options_.now ? options_.now() : std::chrono::steady_clock::now();
  }
  void read_static(Device& d);
  void read_static_details(Device& d);
  void read_tlimits(Device& d);         ///< DeviceStatic::tlimit_*, within read_static_details
  void read_board_identity(Device& d);  ///< brand, part numbers, ..., within read_static_details
  /// Records that GetHandleByIndex answered `rc` for `d`: lost, or unopened and why.
  void not_opened(Device& d, nvmlReturn_t rc);
  bool probe(Device& d);
  /// nullopt when `d` can be read now (after a probe if it is lost or unopened), else why not.
  std::optional<Missing> unavailable(Device& d);
  Missing note_failure(Device& d, MetricGroup group, nvmlReturn_t rc);
  void read_field_values(Device& d, MetricSet what, DeviceSample& s);
  // nvml_extra_reads.cc
  bool detect_gpm(Device& d);
  void release_gpm(Device& d);
  Missing extra_failure(Device& d, nvmlReturn_t rc);

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
