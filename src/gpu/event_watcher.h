// SPDX-License-Identifier: MIT
// EventWatcher: NVML's asynchronous events (XIDs, single- and double-bit ECC errors) delivered
// as GpuEvent through a callback. NVML has no way to poll them cheaply, so the watcher owns one
// thread that blocks in nvmlEventSetWait_v2 with a bounded timeout; this is the one NVML
// caller besides the sampler thread (NVML is thread-safe).
//
// Behaviour: every GPU is registered for XID + ECC events; a GPU that refuses ECC events
// (NOT_SUPPORTED, e.g. ECC disabled) is registered for XIDs only, and one that refuses those
// too is left out for good. A lost GPU (nvml::is_gpu_lost) is reported (GpuEvent::kLost) and
// re-registered every `lost_retry` until it answers (kRecovered). After the wait fails with
// anything but TIMEOUT (UNKNOWN leaves the set undefined, per nvml.h) the set is freed and
// rebuilt. Events carry no time of their own, so each is stamped on receipt.
//
// Thread-safety: start() and stop() from one controlling thread; registered() and rebuilds()
// from any thread. The callback runs on the watcher's thread, must return quickly and must not
// throw (an exception is swallowed).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "gpu/gpu_backend.h"
#include "nvml/nvml_library.h"

namespace gpumon {

class EventWatcher final : public EventStream {
 public:
  using Callback = std::function<void(const GpuEvent&)>;

  struct Options {
    /// Longest single wait in NVML, so also the longest stop() takes.
    std::chrono::milliseconds wait_timeout{250};
    /// How often a lost GPU's registration is retried.
    std::chrono::milliseconds lost_retry{5000};
    /// Pause after a failed wait or set creation, so a broken driver is not spun on.
    std::chrono::milliseconds error_backoff{200};
  };

  /// `library` (already initialised by its backend) must outlive the watcher; GPUs are
  /// 0..device_count-1 in NVML index order.
  EventWatcher(const nvml::NvmlLibrary& library, unsigned device_count, Callback callback,
               Options options);
  EventWatcher(const nvml::NvmlLibrary& library, unsigned device_count, Callback callback)
      : EventWatcher(library, device_count, std::move(callback), Options{}) {}
  ~EventWatcher() override;
  EventWatcher(const EventWatcher&) = delete;
  EventWatcher& operator=(const EventWatcher&) = delete;

  /// Starts the thread. False (and no thread) when the library lacks the event API.
  bool start();
  /// Stops and joins the thread, within about one wait_timeout. Idempotent.
  void stop();

  /// Event type bits GPU `index` is registered for now (0: none: unsupported or lost).
  unsigned long long registered(unsigned index) const;
  /// How many times the event set was built (1 after a clean start).
  std::uint64_t builds() const { return builds_.load(); }

 private:
  struct Gpu {
    nvmlDevice_t handle = nullptr;
    unsigned long long mask = 0;  ///< registered event types
    bool unsupported = false;     ///< refused every event type: never asked again
    bool lost = false;
    std::chrono::steady_clock::time_point last_try{};
  };

  void run();
  void rebuild();
  bool register_gpu(unsigned index);  // true when registered
  void retry_lost();
  void deliver(const nvmlEventData_t& data);
  void emit(unsigned gpu, GpuEvent::Kind kind, std::uint64_t value);
  bool pause(std::chrono::milliseconds d);  // false when stopping

  const nvml::NvmlLibrary& lib_;
  Callback callback_;
  Options options_;
  std::thread thread_;
  mutable std::mutex mutex_;  // guards stop_ and gpus_[*].mask for registered()
  std::condition_variable wake_;
  bool stop_ = false;
  std::vector<Gpu> gpus_;  // written only by the watcher thread
  nvmlEventSet_t set_ = nullptr;
  std::atomic<std::uint64_t> builds_{0};
};

}  // namespace gpumon
