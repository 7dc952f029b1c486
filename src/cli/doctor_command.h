// SPDX-License-Identifier: MIT
// `gpumon doctor RUN.gpumon [--json] [--min-severity info|warning|critical]`: the findings and
// health score of a recording (docs/DIAGNOSES.md).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace gpumon {

inline constexpr int kDoctorOk = 0;      ///< analysed, whatever it found
inline constexpr int kDoctorFailed = 1;  ///< the recording cannot be read
inline constexpr int kDoctorUsage = 2;   ///< bad arguments

/// `args` are the words after "doctor". Never throws.
int run_doctor_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace gpumon
