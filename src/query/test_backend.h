// SPDX-License-Identifier: MIT
// Test doubles for gpumon query's tests: an in-memory GpuBackend, the H200 that
// testdata/nvidia-smi/h200 was captured on, and a manual LoopClock.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpu/gpu_backend.h"
#include "query/loop_schedule.h"
#include "query/query_command.h"

namespace gpumon::query::testing {

/// What the captured H200's -q shows beyond the sample (testdata/nvidia-smi/h200/modes/q.txt).
ReportDetails h200_report_details();

/// A GpuBackend over plain values. sample() fills only the groups asked for (the others stay
/// kNotAvailable), so tests see whether a query asks for what it prints.
class TestBackend final : public GpuBackend {
 public:
  SystemInfo system_info;
  std::vector<DeviceStatic> statics;
  std::vector<DeviceSample> samples;  ///< the full state of each GPU, one per static
  std::vector<Reading<std::vector<GpuProcess>>> process_lists;  ///< one per GPU (may be empty)
  std::vector<bool> lost;                                       ///< per GPU
  std::vector<MetricSet> requests;                              ///< every sample() call's set
  std::function<void(unsigned index)> on_sample;  ///< runs at the start of each sample()
  ReportDetails details = h200_report_details();  ///< every GPU's (kGpuLost when lost)

  const SystemInfo& system() const override { return system_info; }
  unsigned device_count() const override { return static_cast<unsigned>(statics.size()); }
  const DeviceStatic& device(unsigned index) const override { return statics.at(index); }
  DeviceSample sample(unsigned index, MetricSet what) override;
  Reading<std::vector<GpuProcess>> processes(unsigned index) override;
  ReportDetails report_details(unsigned index) override;

  /// Adds a GPU; returns its index.
  unsigned add(const DeviceStatic& info, const DeviceSample& state);
};

/// Local wall time from "YYYY/MM/DD HH:MM:SS.mmm" (as nvidia-smi prints it).
std::chrono::system_clock::time_point local_time(const std::string& text);

/// The captured H200 (driver 580.159.04), idle, as in testdata/nvidia-smi/h200/fields.txt.
SystemInfo h200_system();
DeviceStatic h200_static();
DeviceSample h200_idle_sample();

/// A backend with `gpus` copies of the H200 (index, UUID, bus id and serial made distinct for
/// copies after the first).
std::unique_ptr<TestBackend> h200_backend(unsigned gpus = 1);

/// A LoopClock whose time moves only when the loop sleeps (or a test advances it).
class ManualClock final : public LoopClock {
 public:
  TimePoint time{};
  std::vector<TimePoint> sleeps;  ///< every deadline slept until
  bool stop = false;
  /// Called with the current time on each sleep; lets a test stop the loop or move time on.
  std::function<void(ManualClock&)> on_sleep;

  TimePoint now() override { return time; }
  bool sleep_until(TimePoint deadline) override;
  bool stop_requested() override { return stop; }
};

/// Runs run_query_command against `backend` (shared, so a test can inspect it afterwards).
struct RunResult {
  int rc = -1;
  std::string out;
  std::string err;
};
RunResult run_query(const std::vector<std::string>& args,
                    const std::shared_ptr<TestBackend>& backend, LoopClock* clock = nullptr);

}  // namespace gpumon::query::testing
