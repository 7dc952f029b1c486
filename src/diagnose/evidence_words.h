// SPDX-License-Identifier: MIT
// A finding's evidence in words, with units, for people: ("gpu5_throttle_share", 0.29) reads
// "GPU 5 throttled 29 % of its busy time". The one place that turns evidence keys into words;
// `gpumon doctor`'s text and the report both use it. Machine output (`gpumon doctor --json`,
// the report's JSON) keeps the keys and plain numbers.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "diagnose/finding.h"

namespace gpumon::diagnose {

/// The evidence `key` with value `v` as a short phrase with its unit. Keys of the rules
/// (docs/DIAGNOSES.md) have their own wording, a "gpuN_" or "pidN_" prefix names the GPU or
/// process; any other key reads as its words, the unit taken from its suffix (_share, _pct,
/// _bytes, _ms, _s, _mhz, _w, _c). Numbers are written with a '.', whatever the locale.
std::string evidence_words(std::string_view key, const EvidenceValue& v);

/// Whether `key` has its own wording (else evidence_words() falls back to the key's words).
bool evidence_key_has_words(std::string_view key);

}  // namespace gpumon::diagnose
