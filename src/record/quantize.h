// SPDX-License-Identifier: MIT
// Values are stored as integers in units of the metric catalog's quantum (1 mW for watts).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>

#include "gpu/metric_catalog.h"

namespace gpumon::record {

/// `value` in units of `quantum`, rounded to the nearest; nullopt for NaN, infinities and
/// magnitudes beyond about 9e18 quanta (never stored: such a value reads back as missing).
std::optional<std::int64_t> quantize(double value, double quantum);

/// The value `q` quanta stand for. Fractional quanta (0.001) divide by their inverse, so
/// dequantize(quantize(x)) is the double nearest to x rounded to the quantum (450.123 stays
/// 450.123 rather than 450.12300000000005).
double dequantize(std::int64_t q, double quantum);

}  // namespace gpumon::record
