// SPDX-License-Identifier: MIT
// Hand-made snapshots for the formatter tests: values close to a real H200 under training.
#pragma once

#include "cli/snapshot.h"

namespace gpumon::cli::testing {

/// Driver 580.159.04, CUDA 13.0, host "node01", taken at 2026-12-02 18:46:52.153 UTC.
SystemInfo test_system();
Snapshot empty_snapshot();

/// A busy H200: 98 % util, 45 % memory util, 70.0 of 140.0 GiB, 62 C / HBM 70 C, 612 / 700 W,
/// SM 1980/1980 MHz, memory 3201/3201 MHz, P0, no clock events, ECC 0 / 0.
GpuSnapshot healthy_gpu(unsigned index);
/// Every dynamic reading missing with a different reason.
GpuSnapshot gpu_with_missing_fields(unsigned index);
/// A GPU that fell off the bus.
GpuSnapshot lost_gpu(unsigned index);
/// A GPU NVML lists but would not open (GetHandleByIndex: NO_PERMISSION); not lost.
GpuSnapshot unopened_gpu(unsigned index);

/// PID 4242 of alice on GPU `gpu`: 70 GiB on the GPU, 98.5 % CPU over an interval, 12 GiB RSS.
ProcessRow visible_process(unsigned gpu, unsigned pid = 4242);
/// A PID that this /proc does not have (container without --pid=host).
ProcessRow invisible_process(unsigned gpu, unsigned pid = 848);

}  // namespace gpumon::cli::testing
