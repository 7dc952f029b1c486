// SPDX-License-Identifier: MIT
// load_run_data: a recording as RunData, in one pass over its sample chunks (one chunk decoded
// at a time). Each GPU keeps its last `max_raw_points` samples raw and merges the older ones
// into at most `max_buckets` fixed-width buckets (run_data.h says what a bucket keeps), so
// memory stays bounded whatever the run's length: 8 GPUs x (36,000 + 2,000) points. Steps are
// read one at a time and kept whole up to `max_steps`; past that only the steps whose number is
// a multiple of k (k doubling as needed, the same for every rank so ranks stay aligned by step
// number, a uniform sample for the means and slopes the rules take) plus each process's last
// `tail_steps` (where hangs and the latest behaviour show): about max_steps + processes x
// tail_steps steps (~230 bytes each) whatever the run's length.
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
  std::size_t max_steps = 100000;      ///< steps kept in all before thinning (~23 MB)
  std::size_t tail_steps = 2000;       ///< per process, its latest steps, always kept
  /// Process samples (one a second per process, ~150 bytes) kept in all: past it only those
  /// of every k-th second (k doubling), the same seconds for every process.
  std::size_t max_process_samples = 100000;
};

/// For one node of a job read beside many others (diagnose/job): 1 s buckets over the hour
/// before the last minute, which stays raw, and a quarter of the steps. A node then costs ~15 MB
/// and a fraction of the time of its full-detail read; its diagnosis weighs buckets as a long
/// recording's older part is weighed.
inline LoadLimits job_node_limits() {
  LoadLimits l;
  l.max_raw_points = 600;
  l.max_buckets = 3600;
  l.max_steps = 25000;
  l.tail_steps = 500;
  l.max_process_samples = 25000;
  return l;
}

/// The recording at `path` as RunData (finish_run_data applied), or why it cannot be read (the
/// message names the file).
record::ReadResult<RunData> load_run_data(const std::string& path, const LoadLimits& limits = {});

}  // namespace gpumon::diagnose
