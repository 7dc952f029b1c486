// SPDX-License-Identifier: MIT
// Small, locale-independent text pieces shared by the snapshot and the live view (fmt only;
// no printf or iostreams, whose output follows the process locale).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/gpu_types.h"  // cuda_version_text
#include "gpu/reading.h"

namespace gpumon::cli {

/// What a missing value prints as: "N/A" (not available, or the GPU gave no value now),
/// "n/s" (not supported by this GPU or driver), "denied" (no permission), "lost" (GPU lost),
/// "err" (any other error). Never a number.
std::string_view missing_token(Missing why);

/// 150323855360 -> "140.0" (GiB with one decimal; binary units, as nvidia-smi's MiB).
std::string gib(std::uint64_t bytes);

/// A short size with its unit: "812 KiB", "512 MiB", "70.2 GiB", "1.5 TiB".
std::string short_bytes(std::uint64_t bytes);

/// "[#####.....]": `fraction` (clamped to 0..1) of `width` cells filled.
std::string bar(double fraction, std::size_t width);

/// Local time "2026-11-29 18:46:52 UTC" (zone abbreviation from the C library).
std::string local_time_text(std::chrono::system_clock::time_point t);

/// UTC time in RFC 3339 with milliseconds: "2026-11-29T18:46:52.153Z".
std::string utc_time_text(std::chrono::system_clock::time_point t);

/// An active clock-event ("throttle") reason in words, and whether it costs performance.
struct ClockEventWord {
  std::string text;      ///< "power cap", "thermal slowdown", "idle"
  bool problem = false;  ///< a throttle reason (gpu/throttle.h); idle, sync boost are not
};

/// The reasons set in `mask`, in bit order; unknown bits as "other (0x...)".
std::vector<ClockEventWord> clock_event_words(std::uint64_t mask);

/// The text of a Reading, or its missing token.
template <typename T, typename Fn>
std::string reading_text(const Reading<T>& r, Fn format) {
  return r.has_value() ? format(r.value()) : std::string(missing_token(r.why()));
}

}  // namespace gpumon::cli
