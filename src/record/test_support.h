// SPDX-License-Identifier: MIT
// Helpers for the recording's tests: synthetic samples, temporary folders, expected values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/metric_catalog.h"
#include "record/recording_reader.h"
#include "record/recording_types.h"
#include "record/sample_stream.h"
#include "sampler/sample_sink.h"
#include "util/testing/temp_dir.h"

namespace gpumon::record::testing {

using ::gpumon::testing_util::TempDir;

/// A busy H200-like sample of GPU `gpu` at tick `i` (values vary with i; some fields missing).
DeviceSample busy_sample(unsigned gpu, int i);
/// Tick `i` of `gpus` GPUs, `interval_ms` apart from `start_ms` (wall time).
TickSample make_tick(unsigned gpus, int i, std::int64_t start_ms, int interval_ms);
std::vector<DeviceStatic> make_devices(unsigned gpus);
RunInfo test_run_info();

/// What the recording should give back for metric `id` of `s`: quantised, NaN as missing.
std::optional<double> expected_value(const DeviceSample& s, MetricId id);

/// Every row of a recording (fails the calling test on a read error).
std::vector<SampleRow> read_all_rows(const std::string& path);

/// Copies `from` to `to` keeping only the first `size` bytes (size may exceed the length).
void copy_prefix(const std::string& from, const std::string& to, std::size_t size);
std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& bytes);

}  // namespace gpumon::record::testing
