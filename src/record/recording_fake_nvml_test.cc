// SPDX-License-Identifier: MIT
// End to end through gpumon's fake NVML: the demo scenario's 8 GPUs, read by NvmlBackend,
// recorded, exported as CSV: every value comes back as the backend read it.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <sstream>

#include "gpu/nvml_backend.h"
#include "record/export_command.h"
#include "record/export_format.h"
#include "record/recording_writer.h"
#include "record/test_support.h"

namespace gpumon::record {
namespace {

TEST(RecordingFakeNvml, DemoScenarioRoundTripsThroughTheBackendAndTheCsvExport) {
  struct stat st {};
  if (::stat(GPUMON_RECORD_FAKE_NVML, &st) != 0) GTEST_SKIP() << "fake NVML not built";
  ::setenv("GPUMON_FAKE_SCENARIO", "demo", 1);
  ::setenv("GPUMON_FAKE_TIME_OFFSET_S", "30", 1);
  NvmlOpenOptions open_options;
  open_options.library_path = GPUMON_RECORD_FAKE_NVML;
  NvmlOpenError open_error;
  auto backend = NvmlBackend::open(open_options, &open_error);
  ASSERT_NE(backend, nullptr) << open_error.message;
  ASSERT_EQ(backend->device_count(), 8U);

  testing::TempDir dir;
  RecordingOptions options;
  options.path = dir.file("demo.gpumon");
  std::vector<DeviceStatic> devices;
  for (unsigned g = 0; g < 8; ++g) devices.push_back(backend->device(g));
  std::string error;
  auto writer = RecordingWriter::create(
      options, make_run_info(backend->system(), "test", "python3 train.py"), devices, error);
  ASSERT_NE(writer, nullptr) << error;
  std::vector<TickSample> ticks;
  for (int i = 0; i < 5; ++i) {
    TickSample t;
    t.wall_time = WallClock::time_point(std::chrono::milliseconds(1764446400000 + i * 1000));
    for (unsigned g = 0; g < 8; ++g) {
      t.gpus.push_back(backend->sample(g, MetricSet::all()));
      t.gpus.back().wall_time = t.wall_time;
    }
    writer->on_tick(t);
    ticks.push_back(std::move(t));
  }
  writer->close();
  ASSERT_EQ(writer->status().error, "");

  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(
      run_export_command({options.path, "--metrics", "power_draw_w,memory_used_bytes"}, out, err),
      kExportOk)
      << err.str();
  std::istringstream lines(out.str());
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "timestamp,gpu,power_draw_w [W],memory_used_bytes [bytes]");
  for (const auto& t : ticks) {
    for (const auto& s : t.gpus) {
      ASSERT_TRUE(std::getline(lines, line));
      std::ostringstream want;
      want << format_iso_ms(to_unix_ms(t.wall_time)) << ',' << s.index << ','
           << (s.power_draw_w ? format_number(*s.power_draw_w) : "") << ','
           << (s.memory_used_bytes ? std::to_string(*s.memory_used_bytes) : "");
      EXPECT_EQ(line, want.str());
    }
  }
  EXPECT_FALSE(std::getline(lines, line));

  std::string open_err;
  auto reader = RecordingReader::open(options.path, open_err);
  ASSERT_NE(reader, nullptr) << open_err;
  EXPECT_EQ(reader->meta("simulated_scenario"), "demo");
  EXPECT_EQ(reader->devices().size(), 8U);
  EXPECT_EQ(reader->devices()[0].name, "NVIDIA H200");
}

}  // namespace
}  // namespace gpumon::record
