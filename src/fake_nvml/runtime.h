// SPDX-License-Identifier: MIT
// The state behind the fake library's C exports: the loaded scenario, scenario time, device
// handles, per-call rules (errors, latencies) and call counters.
//
// Thread-safety: every member is guarded by mutex() except the call counters (atomics). The
// wrappers system_call() and device_call() take the mutex around the body and apply latencies
// after releasing it, so a "hanging" entry point does not block calls from other threads.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fake_nvml/scenario.h"
#include "fake_nvml/series.h"
#include "fake_nvml/symbols.h"
#include "nvml/nvml_abi.h"

/// Device handles point into a fixed array, so a handle stays valid and checkable for the life
/// of the process, across nvmlShutdown and nvmlInit.
struct nvmlDevice_st {
  unsigned index;
};

/// Event types registered per device. Which scenario events were delivered is kept by the
/// Runtime (each is delivered once per nvmlInit, so a rebuilt set does not repeat them).
struct nvmlEventSet_st {
  std::map<unsigned, unsigned long long> masks;  ///< device index -> registered event types
};

/// A GPM sample buffer: the device and scenario time of the last nvmlGpmSampleGet into it.
struct nvmlGpmSample_st {
  bool filled = false;
  unsigned device = 0;
  double t_s = 0;
};

namespace gpumon::fake {

#define GPUMON_FAKE_EXPORT extern "C" __attribute__((visibility("default")))

template <int I>
consteval int checked_symbol() {
  static_assert(I >= 0, "every export must be listed in nvml/nvml_entry_points.inc");
  return I;
}
/// The index of an exported symbol, checked at compile time against the entry-point list.
#define GPUMON_FAKE_SYM(name) ::gpumon::fake::checked_symbol<::gpumon::fake::symbol_index(#name)>()

/// How long nvmlDeviceGetPcieThroughput takes unless a scenario says otherwise (H200: ~20.9 ms).
inline constexpr double kPcieThroughputLatencyUs = 20000;

/// Time an entry point takes, applied after the mutex is released.
struct Latency {
  double us = 0;
  bool sleep = false;
  void apply() const;
};

/// Per-device run-time state of the loaded scenario.
struct DeviceState {
  const DeviceSpec* spec = nullptr;
  unsigned index = 0;
  RunningIntegral energy;
  /// Seconds each clock-event counter's bit was set (kFakeEventTimes' order, exports_lists.cc).
  std::array<RunningIntegral, 5> event_time{
      RunningIntegral(RunningIntegral::Rule::kStep), RunningIntegral(RunningIntegral::Rule::kStep),
      RunningIntegral(RunningIntegral::Rule::kStep), RunningIntegral(RunningIntegral::Rule::kStep),
      RunningIntegral(RunningIntegral::Rule::kStep)};
  std::vector<std::uint64_t> rule_hits;  ///< per error rule: matching calls so far
  std::uint64_t process_list_calls = 0;

  /// Reads one field at scenario time t: NOT_SUPPORTED, a scenario error, or the value.
  nvmlReturn_t read(Field f, double t, double* value);
  /// The error a scenario rule gives this call (or this field), or NVML_SUCCESS.
  nvmlReturn_t rule_error(std::optional<Field> field, int symbol, double t);
  /// Nanoseconds `clock_event_reasons` had `bit` set until t (counter `slot`: 0-4).
  double event_time_ns(std::size_t slot, std::uint64_t bit, double t);
  /// Unsupported or failing static fact.
  nvmlReturn_t check(Field f, int symbol, double t);
};

class Runtime {
 public:
  static Runtime& get();

  std::mutex& mutex() { return mutex_; }
  /// Notified (under mutex()) when a test moves held scenario time: event waits wait on it.
  std::condition_variable& time_moved() { return time_moved_; }
  void count(int symbol) { counts_[static_cast<std::size_t>(symbol)].fetch_add(1); }
  std::uint64_t count_of(const char* symbol) const;
  void reset_counts();

  // Everything below needs mutex().
  nvmlReturn_t init(Latency* latency);
  nvmlReturn_t shutdown();
  bool initialized() const { return init_count_ > 0; }
  const Scenario& scenario() const { return *scenario_; }
  double now_s() const;
  /// Real seconds until scenario time t_s (negative when past; infinite stays infinite, and so
  /// does any later time while time is held).
  double real_seconds_until(double t_s) const {
    if (held_s_ && t_s > *held_s_) return std::numeric_limits<double>::infinity();
    return (t_s - now_s()) / scale_;
  }
  /// From now on scenario time stands at t_s, until a test moves it again or the scenario is
  /// loaded again (gpumonFakeSetTime). Wakes the event waits.
  void hold_time(double t_s);
  /// Wall-clock time (us since 1970) of scenario time t_s, stable across calls.
  unsigned long long wall_us(double t_s) const;
  unsigned device_count() const { return static_cast<unsigned>(devices_.size()); }
  DeviceState* device(nvmlDevice_t handle);
  DeviceState* device(unsigned index);
  static nvmlDevice_t handle(unsigned index);
  /// GPU_IS_LOST, a rule's error, or NVML_SUCCESS for a call on device `d`; sets its latency.
  nvmlReturn_t gate(DeviceState& d, int symbol, double t, Latency* latency);
  Latency system_latency(int symbol, double t) const;
  /// Name of the scenario that nvmlInit would load (or has loaded).
  const char* scenario_name();

  nvmlEventSet_t new_event_set();
  bool valid_event_set(nvmlEventSet_t set) const { return event_sets_.count(set) != 0; }
  void free_event_set(nvmlEventSet_t set);
  /// (device index, event index) pairs already delivered through any set since nvmlInit.
  std::set<std::pair<unsigned, std::size_t>>& delivered_events() { return delivered_events_; }

  nvmlGpmSample_t new_gpm_sample();
  bool valid_gpm_sample(nvmlGpmSample_t sample) const { return gpm_samples_.count(sample) != 0; }
  void free_gpm_sample(nvmlGpmSample_t sample) { gpm_samples_.erase(sample); }

 private:
  Runtime() = default;
  std::string load(Latency* latency);  // returns an error message, empty on success
  void report(const std::string& message);

  std::mutex mutex_;
  std::array<std::atomic<std::uint64_t>, kSymbolCount> counts_{};
  int init_count_ = 0;
  std::shared_ptr<const Scenario> scenario_;
  std::vector<DeviceState> devices_;
  std::chrono::steady_clock::time_point start_{};
  std::chrono::system_clock::time_point start_wall_{};
  double offset_s_ = 0;
  double scale_ = 1;
  std::optional<double> held_s_;  ///< scenario time stands here (GPUMON_FAKE_TIME_SCALE=0, hooks)
  std::condition_variable time_moved_;
  std::string last_report_;
  std::array<char, 256> name_{};
  std::map<nvmlEventSet_t, std::unique_ptr<nvmlEventSet_st>> event_sets_;
  std::set<std::pair<unsigned, std::size_t>> delivered_events_;
  std::map<nvmlGpmSample_t, std::unique_ptr<nvmlGpmSample_st>> gpm_samples_;
};

/// Runs `body()` for an entry point that needs no device: counts the call, checks nvmlInit,
/// applies the scenario's latency for it. Never throws.
template <typename Body>
nvmlReturn_t system_call(int symbol, Body&& body) {
  Runtime& rt = Runtime::get();
  rt.count(symbol);
  Latency latency;
  nvmlReturn_t rc = NVML_ERROR_UNKNOWN;
  try {
    std::lock_guard<std::mutex> lock(rt.mutex());
    if (!rt.initialized()) return NVML_ERROR_UNINITIALIZED;
    latency = rt.system_latency(symbol, rt.now_s());
    rc = body(rt);
  } catch (...) {
    rc = NVML_ERROR_UNKNOWN;
  }
  latency.apply();
  return rc;
}

/// Runs `body(device_state, t)` for an entry point on `device`: counts the call, checks nvmlInit
/// and the handle, answers GPU_IS_LOST and scenario errors, applies latency. Never throws.
template <typename Body>
nvmlReturn_t device_call(int symbol, nvmlDevice_t device, Body&& body) {
  Runtime& rt = Runtime::get();
  rt.count(symbol);
  Latency latency;
  nvmlReturn_t rc = NVML_ERROR_UNKNOWN;
  try {
    std::lock_guard<std::mutex> lock(rt.mutex());
    if (!rt.initialized()) return NVML_ERROR_UNINITIALIZED;
    DeviceState* d = rt.device(device);
    if (d == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const double t = rt.now_s();
    rc = rt.gate(*d, symbol, t, &latency);
    if (rc == NVML_SUCCESS) rc = body(*d, t);
  } catch (...) {
    rc = NVML_ERROR_UNKNOWN;
  }
  latency.apply();
  return rc;
}

/// Copies `text` into an NVML string buffer: INSUFFICIENT_SIZE when it does not fit with its NUL.
nvmlReturn_t copy_string(const std::string& text, char* buf, unsigned int length);

}  // namespace gpumon::fake
