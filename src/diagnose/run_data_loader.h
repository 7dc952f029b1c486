// SPDX-License-Identifier: MIT
// load_run_data: a recording as RunData, in one pass over its sample chunks (one chunk decoded
// at a time). Each GPU keeps its last `max_raw_points` samples raw and merges the older ones
// into at most `max_buckets` fixed-width buckets (run_data.h says what a bucket keeps), so
// memory stays bounded whatever the run's length: 8 GPUs x (36,000 + 2,000) points.
//
// Thread-safety: a pure function of the file.
#pragma once

#include <cstddef>
#include <string>

#include "diagnose/run_data.h"
#include "record/recording_reader.h"

namespace gpumon::diagnose {

struct LoadLimits {
  std::size_t max_raw_points = 36000;  ///< per GPU: one hour at 10 Hz
  std::size_t max_buckets = 2000;      ///< per GPU, for the samples before those
};

/// The recording at `path` as RunData (finish_run_data applied), or why it cannot be read (the
/// message names the file).
record::ReadResult<RunData> load_run_data(const std::string& path, const LoadLimits& limits = {});

}  // namespace gpumon::diagnose
