// SPDX-License-Identifier: MIT
// C exports: event sets. Every scenario event (XID or ECC) of a registered device and type is
// delivered once, as soon as its scenario time has passed (also events from before the
// registration, so that tests started at a later scenario time still see them).
#include <algorithm>
#include <chrono>
#include <limits>
#include <mutex>

#include "fake_nvml/runtime.h"

using gpumon::fake::DeviceState;
using gpumon::fake::Field;
using gpumon::fake::Runtime;

namespace {

constexpr unsigned long long kSupportedEvents = gpumon::nvml::kEventTypeSingleBitEccError |
                                                gpumon::nvml::kEventTypeDoubleBitEccError |
                                                gpumon::nvml::kEventTypeXidCriticalError;

// One attempt: delivers the earliest due event of a registered type, or says when the next one
// falls due. Every scenario event is delivered once per nvmlInit, through whichever set asks.
nvmlReturn_t try_deliver(Runtime& rt, nvmlEventSet_t set, nvmlEventData_t* data, bool v2,
                         double* next_due_s) {
  const double now = rt.now_s();
  *next_due_s = std::numeric_limits<double>::infinity();
  const gpumon::fake::XidEvent* best = nullptr;
  std::pair<unsigned, std::size_t> best_key;
  auto& delivered = rt.delivered_events();
  for (const auto& [index, mask] : set->masks) {
    const DeviceState* d = rt.device(index);
    if (d == nullptr) continue;
    const auto& events = d->spec->xid_events;
    for (std::size_t i = 0; i < events.size(); ++i) {
      if ((events[i].event_type & mask) == 0 || delivered.count({index, i}) != 0) continue;
      if (events[i].at_s > now) {
        *next_due_s = std::min(*next_due_s, events[i].at_s);
        break;  // sorted: the rest are later
      }
      if (best == nullptr || events[i].at_s < best->at_s) {
        best = &events[i];
        best_key = {index, i};
      }
      break;  // the earliest undelivered event of this device
    }
  }
  if (best == nullptr) return NVML_ERROR_TIMEOUT;
  delivered.insert(best_key);
  data->device = Runtime::handle(best_key.first);
  data->eventType = best->event_type;
  data->eventData = best->xid;
  if (v2) data->gpuInstanceId = data->computeInstanceId = gpumon::nvml::kNoMigInstance;
  return NVML_SUCCESS;
}

// What a wait answers besides events: a scenario error rule on the wait (checked against each
// registered device, e.g. UNKNOWN), or GPU_IS_LOST while a registered device is lost.
nvmlReturn_t wait_failure(Runtime& rt, nvmlEventSet_t set, int symbol) {
  const double now = rt.now_s();
  for (const auto& [index, mask] : set->masks) {
    DeviceState* d = rt.device(index);
    if (d == nullptr) continue;
    if (d->spec->lost_at(now)) return NVML_ERROR_GPU_IS_LOST;
    if (const nvmlReturn_t rc = d->rule_error(std::nullopt, symbol, now); rc != NVML_SUCCESS)
      return rc;
  }
  return NVML_SUCCESS;
}

// Waits up to timeout_ms for a due event, sleeping (the lock released) until the next one is
// due or a test moves held scenario time.
nvmlReturn_t wait_impl(int symbol, nvmlEventSet_t set, nvmlEventData_t* data,
                       unsigned int timeout_ms, bool v2) {
  Runtime& rt = Runtime::get();
  rt.count(symbol);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  try {
    std::unique_lock<std::mutex> lock(rt.mutex());
    for (;;) {
      if (!rt.initialized()) return NVML_ERROR_UNINITIALIZED;
      if (data == nullptr || !rt.valid_event_set(set)) return NVML_ERROR_INVALID_ARGUMENT;
      double next_due_s = 0;
      if (try_deliver(rt, set, data, v2, &next_due_s) == NVML_SUCCESS) return NVML_SUCCESS;
      if (const nvmlReturn_t rc = wait_failure(rt, set, symbol); rc != NVML_SUCCESS) return rc;
      const double until_due_s = rt.real_seconds_until(next_due_s);  // real seconds
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) return NVML_ERROR_TIMEOUT;
      auto wake = deadline;
      if (until_due_s < 3600) {
        wake = std::min(wake, now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                        std::chrono::duration<double>(until_due_s)));
      }
      rt.time_moved().wait_until(lock, wake);
    }
  } catch (...) {
    return NVML_ERROR_UNKNOWN;
  }
}

}  // namespace

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  return gpumon::fake::system_call(GPUMON_FAKE_SYM(nvmlEventSetCreate), [&](Runtime& rt) {
    if (set == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *set = rt.new_event_set();
    return NVML_SUCCESS;
  });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device,
                                                         unsigned long long eventTypes,
                                                         nvmlEventSet_t set) {
  const int symbol = GPUMON_FAKE_SYM(nvmlDeviceRegisterEvents);
  return gpumon::fake::device_call(symbol, device, [&](DeviceState& d, double t) {
    if (!Runtime::get().valid_event_set(set)) return NVML_ERROR_INVALID_ARGUMENT;
    if (eventTypes == 0 || (eventTypes & ~kSupportedEvents) != 0) return NVML_ERROR_NOT_SUPPORTED;
    if (const nvmlReturn_t rc = d.check(Field::kEvents, symbol, t); rc != NVML_SUCCESS) return rc;
    constexpr unsigned long long kEcc =
        gpumon::nvml::kEventTypeSingleBitEccError | gpumon::nvml::kEventTypeDoubleBitEccError;
    if ((eventTypes & kEcc) != 0 && !d.spec->ecc_enabled) return NVML_ERROR_NOT_SUPPORTED;
    set->masks[d.index] |= eventTypes;
    return NVML_SUCCESS;
  });
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data,
                                                    unsigned int timeoutms) {
  return wait_impl(GPUMON_FAKE_SYM(nvmlEventSetWait_v2), set, data, timeoutms, true);
}
GPUMON_FAKE_EXPORT nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t* data,
                                                 unsigned int timeoutms) {
  return wait_impl(GPUMON_FAKE_SYM(nvmlEventSetWait), set, data, timeoutms, false);
}

GPUMON_FAKE_EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  return gpumon::fake::system_call(GPUMON_FAKE_SYM(nvmlEventSetFree), [&](Runtime& rt) {
    if (!rt.valid_event_set(set)) return NVML_ERROR_INVALID_ARGUMENT;
    rt.free_event_set(set);
    return NVML_SUCCESS;
  });
}
