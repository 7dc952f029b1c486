// SPDX-License-Identifier: MIT
#include "record/export_command.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <clocale>
#include <sstream>

#include "record/recording_writer.h"
#include "record/test_support.h"

namespace gpumon::record {
namespace {

using testing::TempDir;

// Two GPUs, three ticks a second apart from 2025-11-29T20:00:00Z; GPU 1 misses its power
// reading at the second tick.
std::string small_recording(const TempDir& dir) {
  const std::string path = dir.file("small.gpumon");
  RecordingOptions options;
  options.path = path;
  std::string error;
  auto w =
      RecordingWriter::create(options, testing::test_run_info(), testing::make_devices(2), error);
  EXPECT_NE(w, nullptr) << error;
  for (int i = 0; i < 3; ++i) {
    TickSample t = testing::make_tick(2, i, 1764446400000, 1000);
    if (i == 1) t.gpus[1].power_draw_w = Reading<double>::missing(Missing::kNotAvailable);
    w->on_tick(t);
  }
  w->close();
  return path;
}

struct Output {
  int rc;
  std::string out;
  std::string err;
};

Output run(const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  const int rc = run_export_command(args, out, err);
  return {rc, out.str(), err.str()};
}

TEST(Export, CsvHasNamesWithUnitsAndEmptyCellsForMissingValues) {
  TempDir dir;
  const auto r = run({small_recording(dir), "--metrics", "power_draw_w,energy_j,pstate"});
  EXPECT_EQ(r.rc, kExportOk) << r.err;
  EXPECT_EQ(r.out,
            "timestamp,gpu,power_draw_w [W],energy_j [J],pstate\n"
            "2025-11-29T20:00:00.000Z,0,450,9876543.21,0\n"
            "2025-11-29T20:00:00.000Z,1,450,9876543.21,0\n"
            "2025-11-29T20:00:01.000Z,0,454.321,9877193.333,0\n"
            "2025-11-29T20:00:01.000Z,1,,9877193.333,0\n"
            "2025-11-29T20:00:02.000Z,0,458.642,9877843.456,0\n"
            "2025-11-29T20:00:02.000Z,1,458.642,9877843.456,0\n");
}

TEST(Export, JsonlHasNullForMissingAndShowsTheUuidOnlyWhenAsked) {
  TempDir dir;
  const std::string path = small_recording(dir);
  const auto r = run({path, "--format=jsonl", "--metrics=power_draw_w", "--gpu", "1"});
  EXPECT_EQ(r.rc, kExportOk) << r.err;
  EXPECT_EQ(r.out,
            "{\"timestamp\":\"2025-11-29T20:00:00.000Z\",\"gpu\":1,\"power_draw_w\":450}\n"
            "{\"timestamp\":\"2025-11-29T20:00:01.000Z\",\"gpu\":1,\"power_draw_w\":null}\n"
            "{\"timestamp\":\"2025-11-29T20:00:02.000Z\",\"gpu\":1,\"power_draw_w\":458.642}\n");
  EXPECT_EQ(r.out.find("GPU-"), std::string::npos);

  const auto shown = run(
      {path, "--format", "csv", "--metrics", "pstate", "--gpu", "0", "--show-uuid", "--no-units"});
  EXPECT_EQ(shown.out.substr(0, shown.out.find('\n', shown.out.find('\n') + 1)),
            "timestamp,gpu,uuid,pstate\n"
            "2025-11-29T20:00:00.000Z,0,GPU-00000000-aaaa-bbbb-cccc-dddddddddddd,0");
}

TEST(Export, DefaultColumnsAreTheMetricsThatHaveValuesInCatalogOrder) {
  TempDir dir;
  const auto r = run({small_recording(dir)});
  ASSERT_EQ(r.rc, kExportOk) << r.err;
  const std::string header = r.out.substr(0, r.out.find('\n'));
  EXPECT_EQ(header.rfind("timestamp,gpu,utilization_gpu_pct [%],utilization_memory_pct [%],", 0),
            0U)
      << header;
  EXPECT_EQ(header.find("fan_speed_pct"), std::string::npos);  // never had a value
  EXPECT_TRUE(header.ends_with(",lost")) << header;            // 0 or 1 for every sample
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 7);
}

TEST(Export, NumbersUseADotUnderACommaLocale) {
  TempDir dir;
  const std::string path = small_recording(dir);
  const char* old = std::setlocale(LC_ALL, nullptr);
  const std::string saved = old ? old : "C";
  std::setlocale(LC_ALL, "de_DE.UTF-8");  // stays "C" where the locale is not installed
  const auto r = run({path, "--metrics", "power_draw_w", "--gpu", "0"});
  std::setlocale(LC_ALL, saved.c_str());
  EXPECT_NE(r.out.find(",454.321\n"), std::string::npos) << r.out;
}

TEST(Export, UsageErrorsSayWhatIsWrong) {
  TempDir dir;
  const std::string path = small_recording(dir);
  EXPECT_EQ(run({}).rc, kExportUsage);
  EXPECT_NE(run({path, "--format", "xml"}).err.find("--format must be csv or jsonl"),
            std::string::npos);
  const std::string unknown = run({path, "--metrics", "power,pstate"}).err;
  // The error itself lists the names, so the user needs no doc to fix the command.
  EXPECT_NE(unknown.find("unknown metric 'power'; known: utilization_gpu_pct, "), std::string::npos)
      << unknown;
  EXPECT_NE(unknown.find("power_draw_w"), std::string::npos);
  const auto list = run({"--list-metrics"});
  EXPECT_EQ(list.rc, kExportOk);
  EXPECT_EQ(list.out.rfind("name ", 0), 0U) << list.out;
  EXPECT_NE(list.out.find("\ntemperature_gpu_c "), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("°C"), std::string::npos);
  EXPECT_NE(run({path, "--gpu", "x"}).err.find("--gpu needs a GPU index"), std::string::npos);
  const auto no_gpu = run({path, "--gpu", "7"});
  EXPECT_EQ(no_gpu.rc, kExportUsage);
  EXPECT_NE(no_gpu.err.find("no GPU 7 in this recording (2 GPUs)"), std::string::npos);
  EXPECT_NE(run({path, "--bogus"}).err.find("unexpected argument '--bogus'"), std::string::npos);
  EXPECT_EQ(run({"--help"}).rc, kExportOk);
  const auto missing = run({dir.file("nope.gpumon")});
  EXPECT_EQ(missing.rc, kExportReadError);
  EXPECT_NE(missing.err.find("nope.gpumon: No such file"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace gpumon::record
