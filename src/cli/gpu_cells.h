// SPDX-License-Identifier: MIT
// One GPU reading as short texts with a tone, shared by the snapshot table and the live view
// so both say the same thing the same way. Missing values become missing_token(), dimmed.
#pragma once

#include <optional>
#include <string>

#include "cli/snapshot.h"
#include "cli/styled_line.h"
#include "gpu/gpu_types.h"

namespace gpumon::cli {

struct Cell {
  std::string text;
  Tone tone = Tone::kPlain;
};

/// Where readings turn yellow and red.
struct Thresholds {
  unsigned gpu_temp_warn_c = 80, gpu_temp_bad_c = 87;  ///< H100/H200 slow down near 87-90 C
  unsigned hbm_temp_warn_c = 85, hbm_temp_bad_c = 95;
  double memory_warn = 0.90, memory_bad = 0.97;  ///< fraction of GPU memory used
};

Cell percent_cell(const Reading<unsigned>& pct);        ///< "98 %"
Cell ratio_percent_cell(const Reading<double>& ratio);  ///< 0.874 -> "87 %"
Cell temperature_cell(const Reading<unsigned>& c, unsigned warn, unsigned bad);  ///< "62°C"
Cell power_cell(const DeviceSample& s);                                          ///< "612 / 700 W"
Cell clock_cell(const Reading<unsigned>& mhz,
                const Reading<unsigned>& max_mhz);  ///< "1980/1980 MHz"
Cell pstate_cell(const Reading<unsigned>& pstate);  ///< "P0"

/// Total memory: the sample's, else the static reading taken at start.
Reading<std::uint64_t> memory_total(const DeviceSample& s, const DeviceStatic& d);
/// used / total, when both are known and total > 0.
std::optional<double> memory_fraction(const DeviceSample& s, const DeviceStatic& d);
Cell memory_cell(const DeviceSample& s, const DeviceStatic& d);  ///< "70.2 / 140.4 GiB"
Cell memory_percent_cell(const DeviceSample& s, const DeviceStatic& d, const Thresholds& t);

/// "ECC corr 0 uncorr 0": uncorrected errors in red, corrected in yellow.
StyledLine ecc_cells(const DeviceSample& s);
/// "throttle: none" / "throttle: idle" / "throttle: power cap, thermal slowdown" (problems red).
StyledLine throttle_cells(const DeviceSample& s);

/// A lost GPU's status after its index and name, in the snapshot and the live view alike:
/// "GPU LOST  00000000:18:00.0  XID 79: GPU has fallen off the bus  (see `dmesg | grep -i xid`)":
/// the bus id names the board to pull; the XID (when the live view saw one, with its meaning
/// from gpu/xid.h) and the kernel log say why.
StyledLine lost_gpu_cells(const GpuSnapshot& g);
/// "NOT RESPONDING  nvmlDeviceGetTemperature has not returned for 12 s  (the driver may be
/// hung: try `nvidia-smi`)": a stale sample (DeviceSample::stale), aged at the sample's tick.
/// Not lost: the GPU may answer again.
StyledLine stale_gpu_cells(const DeviceSample& s);

/// The GPU's name, or its missing token; empty for a GPU lost or not opened before its name was
/// read (its row says GPU LOST or CANNOT OPEN already).
std::string gpu_name(const DeviceStatic& d);

}  // namespace gpumon::cli
