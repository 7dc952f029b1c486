// SPDX-License-Identifier: MIT
// nvidia-smi spells some options in ways CLI11 2.1.2 cannot declare: "-lms" (a single dash with
// several letters) and "-l" with an optional value. rewrite_nvidia_smi_args() turns them into
// equivalent long options before CLI11 parses, so scripts written for nvidia-smi work unchanged.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpumon::query {

/// Seconds `-l` loops with when given no value (nvidia-smi's default).
inline constexpr std::string_view kDefaultLoopSeconds = "5";

/// Rewrites, left to right, until a "--" (copied with everything after it unchanged):
///   -lms V, -lms=V              -> --loop-ms V, --loop-ms=V
///   -l, --loop (no value)       -> --loop=5
///   -l V, --loop V, -lV, -l=V   -> --loop=V   (V: the next word unless it is an option; a
///                                              negative number counts as a value, so that
///                                              the interval check can name it)
///   -i=V, -c=V, -f=V, -d=V      -> -i V, ...   (CLI11 would keep the '=' in the value)
///   --name= (empty value)       -> --name ""   (CLI11 would take the next word as the value)
/// Everything else is copied as it is.
std::vector<std::string> rewrite_nvidia_smi_args(const std::vector<std::string>& args);

}  // namespace gpumon::query
