// SPDX-License-Identifier: MIT
// `gpumon query -q`: nvidia-smi -q's report, laid out byte for byte as nvidia-smi 580 prints it
// on an H200 (testdata/nvidia-smi/h200/modes/q*.txt), so scripts that grep or split its
// "Label : value" lines switch by one word. Every line nvidia-smi prints is there, in its order
// and indentation; a value gpumon does not read says "N/A", as nvidia-smi says of a value it
// cannot get. Values gpumon reads come from the `--query-gpu` field registry, so -q and
// --query-gpu print the same number the same way.
//
// -d SECTIONS keeps only the chosen sections, and adds what nvidia-smi adds to them: the
// driver's sample buffers (min/max/avg over the last seconds) under UTILIZATION and POWER.
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/extra_reads.h"
#include "gpu/gpu_types.h"
#include "gpu/metric_group.h"
#include "query/query_error.h"

namespace gpumon::query {

/// The sections -d can choose, by nvidia-smi's names. 0 means the whole report.
enum QSection : unsigned {
  kQMemory = 1U << 0,
  kQUtilization = 1U << 1,
  kQEcc = 1U << 2,
  kQTemperature = 1U << 3,
  kQPower = 1U << 4,
  kQClock = 1U << 5,
  kQCompute = 1U << 6,
  kQPids = 1U << 7,
  kQPerformance = 1U << 8,
  kQRowRemapper = 1U << 9,
};

/// -d's list: comma-separated section names, as nvidia-smi takes them ("MEMORY,UTILIZATION").
/// A name nvidia-smi has that gpumon does not fill is refused, naming those it does.
Expected<unsigned> parse_q_display(std::string_view list);

/// What one GPU's block is made of. The driver's sample buffers are read only for the sections
/// that show them; nullopt otherwise.
struct QGpu {
  const DeviceStatic* device = nullptr;
  DeviceSample sample;
  PcieThroughput pcie;
  ReportDetails details;  ///< read when q_needs_report_details()
  Reading<std::vector<GpuProcess>> processes =
      Reading<std::vector<GpuProcess>>::missing(Missing::kNotAvailable);
  /// The driver's sample buffers, by DriverBuffer; read when q_buffers() lists them.
  std::array<Reading<DriverSamples>, kDriverBufferCount> buffers;
  Reading<DriverSamples>& buffer(DriverBuffer b) { return buffers.at(static_cast<std::size_t>(b)); }
  const Reading<DriverSamples>& buffer(DriverBuffer b) const {
    return buffers.at(static_cast<std::size_t>(b));
  }
};

/// The report's head: when it was taken (local time), the driver, and how many GPUs there are.
struct QHeader {
  std::tm local{};
  const SystemInfo* system = nullptr;
  unsigned attached = 0;
};

/// The metric groups the report with `display` needs from the backend.
MetricSet q_metrics(unsigned display);
/// Which extra reads it needs: PCIe throughput (the whole report's PCI section) and the process
/// list.
bool q_needs_pcie(unsigned display);
bool q_needs_processes(unsigned display);
/// Whether it shows anything of ReportDetails (the whole report, ECC, remapped rows, power ...).
bool q_needs_report_details(unsigned display);
/// The driver's sample buffers it shows (those of UTILIZATION, POWER and CLOCK under -d).
std::vector<DriverBuffer> q_buffers(unsigned display);

/// The whole report (`display` 0) or the chosen sections, for `gpus` in order.
std::string q_report(const QHeader& header, const std::vector<QGpu>& gpus, unsigned display);

}  // namespace gpumon::query
