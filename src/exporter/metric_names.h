// SPDX-License-Identifier: MIT
// The exporter's name tables (docs/exporter.md): which catalog metric becomes which Prometheus
// family, with its type, the factor to base units and the HELP text, natively (`gpumon_gpu_*`,
// base units, ratios 0-1) and with `--compat dcgm` (dcgm-exporter's names and units).
// Metrics that need more than "value x scale" (clock-event reasons, XIDs, processes, info
// series) are written by the renderer itself.
//
// Thread-safety: immutable tables, safe from any thread.
#pragma once

#include <cmath>
#include <span>
#include <string>
#include <string_view>

#include "exporter/exposition.h"
#include "gpu/metric_catalog.h"

namespace gpumon::exporter {

struct FamilySpec {
  MetricId id;            ///< the catalog metric the value comes from
  std::string_view name;  ///< the Prometheus family name
  MetricType type;
  double scale;           ///< value = catalog value * scale (pct -> ratio: 0.01, MHz -> Hz: 1e6)
  std::string_view what;  ///< first words of the HELP text
  std::string help;       ///< `what`, unit, and the catalog's source and window
  /// Scaled values are integers, as DCGM's: a division (bytes to MiB) is floored, a
  /// multiplication back to the driver's unit (s to ns) rounded.
  bool whole = false;
};

/// Native families, one per catalog metric exported as a plain per-GPU value (label `gpu`).
std::span<const FamilySpec> native_families();
/// `--compat dcgm` families with a catalog source (DCGM_FI_DEV_XID_ERRORS comes from events).
std::span<const FamilySpec> dcgm_families();

/// `value` (catalog units) times f.scale; a scale below 1 divides by its inverse, so 47 % is
/// 0.47 and not 0.47000000000000003. Floored when f.whole.
double scaled(const FamilySpec& f, double value);

/// The family of catalog metric `id` in `families`, or nullptr.
const FamilySpec* find_family(std::span<const FamilySpec> families, MetricId id);

/// Every named clock-event reason, in bit order (`clock_event_reason_names` of each bit).
std::span<const std::pair<std::uint64_t, std::string>> clock_event_reasons();

}  // namespace gpumon::exporter
