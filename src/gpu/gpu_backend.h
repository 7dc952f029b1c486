// SPDX-License-Identifier: MIT
// GpuBackend: GPUs in domain terms. The sampler, `gpumon query` and the snapshot read GPUs only
// through this interface; NvmlBackend implements it over NVML (real or fake library), and tests
// may implement it directly.
//
// Thread-safety: calls for one GPU come from one thread at a time; calls for different GPUs may
// run at once (the sampler's reader left inside a hung call beside the one reading the others),
// so state shared between GPUs is guarded.
// system(), device_count() and device(i) between calls for GPU i are safe from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpu/extra_reads.h"
#include "gpu/gpu_types.h"
#include "gpu/metric_group.h"

namespace gpumon {

/// A running source of asynchronous GPU events (XID, ECC); destroying it stops it and waits
/// until its callback can no longer run.
class EventStream {
 public:
  virtual ~EventStream() = default;
};

/// Copies the readings of `groups` from `from` into `into` (a sample read in two parts), and
/// `lost` when `from` found the GPU lost.
void merge_groups(DeviceSample& into, const DeviceSample& from, MetricSet groups);

class GpuBackend {
 public:
  virtual ~GpuBackend() = default;

  virtual const SystemInfo& system() const = 0;
  virtual unsigned device_count() const = 0;
  /// Static facts of GPU `index` (< device_count()); the slow ones only once a sample asked
  /// for MetricGroup::kStaticDetails.
  virtual const DeviceStatic& device(unsigned index) const = 0;

  /// Reads the groups in `what` for GPU `index`. Never throws; failures become Missing reasons.
  /// A group that answered NOT_SUPPORTED once is not asked again (field values: each field). A lost
  /// GPU returns a sample with lost = true without calling NVML more than once per `lost_retry`
  /// period.
  virtual DeviceSample sample(unsigned index, MetricSet what) = 0;

  /// Compute processes on GPU `index` (NVML part only; host::ProcessInspector fills the host
  /// details). Missing when the process list cannot be read.
  virtual Reading<std::vector<GpuProcess>> processes(unsigned index) = 0;

  // The reads beyond the cheap sample (extra_reads.h). Each keeps its own per-GPU state (the
  // previous GPM sample, the newest driver timestamp seen), so a caller just calls it on its
  // schedule. A backend without them answers kNotSupported, which is the default here.

  /// Whether GPU `index` has GPM; found out once (one NVML call), then remembered.
  virtual bool gpm_supported(unsigned index) {
    (void)index;
    return false;
  }
  /// GPM ratios over the time since the previous call for this GPU. The first call only takes
  /// the starting sample (kNotAvailable); a call less than 0.1 s after the previous one makes
  /// no NVML call and answers kNotAvailable (NVML needs 100 ms between samples).
  virtual Reading<GpmReading> read_gpm(unsigned index) {
    (void)index;
    return Reading<GpmReading>::missing(Missing::kNotSupported);
  }
  /// Every driver sample of `which` newer than the previous call's newest (all the buffer holds
  /// on the first call), so polling at least every 2 s loses no power sample.
  virtual Reading<DriverSamples> read_driver_samples(unsigned index, DriverBuffer which) {
    (void)index;
    (void)which;
    return Reading<DriverSamples>::missing(Missing::kNotSupported);
  }
  /// Per-process utilization newer than the previous call (the last second on the first call);
  /// samples over 100 % or not newer than the previous call are dropped. Newest per pid.
  virtual Reading<std::vector<ProcessUtilization>> process_utilization(unsigned index) {
    (void)index;
    return Reading<std::vector<ProcessUtilization>>::missing(Missing::kNotSupported);
  }
  /// Starts delivering XID and ECC events of every GPU to `on_event`, from a thread of the
  /// stream's own (so the callback must be thread-safe and quick, and must not call the backend).
  /// nullptr when the backend has no event source (the default) or the driver refuses one.
  virtual std::unique_ptr<EventStream> watch_events(std::function<void(const GpuEvent&)> on_event) {
    (void)on_event;
    return nullptr;
  }
  /// From now on the calling thread's calls note the driver function they are inside in `slot`
  /// (a symbol such as "nvmlDeviceGetTemperature", nullptr between calls), which any thread
  /// may read to name a call that has not returned. `slot` must outlive the thread's calls.
  /// The default notes nothing.
  virtual void note_calls_in(std::atomic<const char*>* slot) { (void)slot; }
  /// What only nvidia-smi -q's report shows (ReportDetails). The default reads nothing: every
  /// value kNotSupported.
  virtual ReportDetails report_details(unsigned index);
  /// PCIe TX and RX. Slow: two calls of about 20 ms each; call only when asked for.
  virtual PcieThroughput pcie_throughput(unsigned index) {
    (void)index;
    return {Reading<double>::missing(Missing::kNotSupported),
            Reading<double>::missing(Missing::kNotSupported)};
  }
};

}  // namespace gpumon
