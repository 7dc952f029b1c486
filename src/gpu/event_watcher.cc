// SPDX-License-Identifier: MIT
#include "gpu/event_watcher.h"

namespace gpumon {
namespace {

constexpr unsigned long long kXid = nvml::kEventTypeXidCriticalError;
constexpr unsigned long long kEcc =
    nvml::kEventTypeSingleBitEccError | nvml::kEventTypeDoubleBitEccError;

}  // namespace

EventWatcher::EventWatcher(const nvml::NvmlLibrary& library, unsigned device_count,
                           Callback callback, Options options)
    : lib_(library), callback_(std::move(callback)), options_(options), gpus_(device_count) {}

EventWatcher::~EventWatcher() {
  stop();
}

bool EventWatcher::start() {
  const auto& fn = lib_.fn();
  if (thread_.joinable()) return true;
  if (fn.event_set_create == nullptr || fn.device_register_events == nullptr ||
      fn.event_set_wait == nullptr || fn.event_set_free == nullptr) {
    return false;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = false;
  }
  thread_ = std::thread([this] { run(); });
  return true;
}

void EventWatcher::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

unsigned long long EventWatcher::registered(unsigned index) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return index < gpus_.size() ? gpus_[index].mask : 0;
}

bool EventWatcher::pause(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(mutex_);
  wake_.wait_for(lock, d, [this] { return stop_; });
  return !stop_;
}

void EventWatcher::run() {
  const auto& fn = lib_.fn();
  rebuild();
  const auto timeout_ms = static_cast<unsigned>(options_.wait_timeout.count());
  while (pause(std::chrono::milliseconds(0))) {
    retry_lost();
    bool any = false;
    for (const Gpu& g : gpus_) any = any || g.mask != 0;
    if (set_ == nullptr || !any) {
      if (!pause(options_.wait_timeout)) break;
      if (set_ == nullptr) rebuild();
      continue;
    }
    nvmlEventData_t data{};
    const nvmlReturn_t rc = fn.event_set_wait(set_, &data, timeout_ms);
    if (rc == NVML_SUCCESS) {
      deliver(data);
    } else if (rc != NVML_ERROR_TIMEOUT) {
      // A lost GPU: the rebuild finds which and leaves it out. UNKNOWN and the rest:
      // the set is undefined; back off, then start over.
      if (!nvml::is_gpu_lost(rc) && !pause(options_.error_backoff)) break;
      rebuild();
    }
  }
  if (set_ != nullptr) fn.event_set_free(set_);
  set_ = nullptr;
}

void EventWatcher::rebuild() {
  const auto& fn = lib_.fn();
  if (set_ != nullptr) fn.event_set_free(set_);
  set_ = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Gpu& g : gpus_) g.mask = 0;
  }
  if (fn.event_set_create(&set_) != NVML_SUCCESS) {
    set_ = nullptr;
    return;
  }
  builds_.fetch_add(1);
  for (unsigned i = 0; i < gpus_.size(); ++i) {
    if (!gpus_[i].unsupported && !gpus_[i].lost) register_gpu(i);
  }
}

bool EventWatcher::register_gpu(unsigned index) {
  const auto& fn = lib_.fn();
  Gpu& g = gpus_[index];
  g.last_try = std::chrono::steady_clock::now();
  nvmlReturn_t rc = NVML_SUCCESS;
  if (g.handle == nullptr || g.lost) rc = fn.device_get_handle_by_index(index, &g.handle);
  unsigned long long mask = kXid | kEcc;
  if (rc == NVML_SUCCESS) rc = fn.device_register_events(g.handle, mask, set_);
  if (rc == NVML_ERROR_NOT_SUPPORTED) {  // often ECC disabled: XIDs alone
    mask = kXid;
    rc = fn.device_register_events(g.handle, mask, set_);
  }
  if (rc == NVML_SUCCESS) {
    const bool was_lost = g.lost;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      g.mask = mask;
    }
    g.lost = false;
    if (was_lost) emit(index, GpuEvent::Kind::kRecovered, 0);
    return true;
  }
  if (rc == NVML_ERROR_NOT_SUPPORTED) {
    g.unsupported = true;
  } else if (nvml::is_gpu_lost(rc) && !g.lost) {
    g.lost = true;
    emit(index, GpuEvent::Kind::kLost, 0);
  }
  return false;
}

void EventWatcher::retry_lost() {
  if (set_ == nullptr) return;
  const auto now = std::chrono::steady_clock::now();
  for (unsigned i = 0; i < gpus_.size(); ++i) {
    if (gpus_[i].lost && now - gpus_[i].last_try >= options_.lost_retry) register_gpu(i);
  }
}

void EventWatcher::deliver(const nvmlEventData_t& data) {
  for (unsigned i = 0; i < gpus_.size(); ++i) {
    if (gpus_[i].handle != data.device || gpus_[i].handle == nullptr) continue;
    if ((data.eventType & kXid) != 0) emit(i, GpuEvent::Kind::kXid, data.eventData);
    if ((data.eventType & nvml::kEventTypeSingleBitEccError) != 0)
      emit(i, GpuEvent::Kind::kEccSingleBit, 0);
    if ((data.eventType & nvml::kEventTypeDoubleBitEccError) != 0)
      emit(i, GpuEvent::Kind::kEccDoubleBit, 0);
    return;
  }
}

void EventWatcher::emit(unsigned gpu, GpuEvent::Kind kind, std::uint64_t value) {
  GpuEvent e;
  e.gpu = gpu;
  e.kind = kind;
  e.value = value;
  e.wall_time = std::chrono::system_clock::now();
  e.mono_time = std::chrono::steady_clock::now();
  try {
    if (callback_) callback_(e);
  } catch (...) {  // a consumer's bug must not end event delivery
  }
}

}  // namespace gpumon
