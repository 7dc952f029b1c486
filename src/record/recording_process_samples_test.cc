// SPDX-License-Identifier: MIT
// Process samples (schema version 3): written and read exactly, missing values stay missing,
// and a version-2 recording (no process_samples table) still reads, with none.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <sstream>

#include "record/export_command.h"
#include "record/recording_reader.h"
#include "record/recording_writer.h"
#include "record/test_support.h"

namespace gpumon::record {
namespace {

using testing::TempDir;

training::ProcessSample full_sample(std::int64_t n) {
  training::ProcessSample s;
  s.time_ms = 1764446400000 + n * 1000;
  s.pid = 4242, s.rank = 3;
  s.cpu_s = 12.34 + static_cast<double>(n);
  s.rss_bytes = 3000000000, s.pss_bytes = 2500000000 + n;
  s.workers = 4, s.workers_cpu_s = 5.5, s.workers_pss_bytes = 800000000;
  s.mem_available_bytes = 100000000000, s.mem_total_bytes = 200000000000;
  s.cgroup_limit_bytes = 150000000000, s.cgroup_usage_bytes = 90000000000;
  return s;
}

int run_export(const std::vector<std::string>& args, std::string& out, std::string& err) {
  std::ostringstream o, e;
  const int rc = run_export_command(args, o, e);
  out = o.str();
  err = e.str();
  return rc;
}

std::string samples_recording(const TempDir& dir) {
  const std::string path = dir.file("samples.gpumon");
  std::string error;
  auto w = RecordingWriter::create({.path = path}, testing::test_run_info(),
                                   testing::make_devices(1), error);
  EXPECT_NE(w, nullptr) << error;
  w->on_process_sample(full_sample(1));
  training::ProcessSample bare;  // nothing readable but the time and pid
  bare.time_ms = 1764446402500, bare.pid = 99, bare.pss_is_rss = true;
  w->on_process_sample(bare);
  w->on_process_sample(full_sample(3));
  w->close();
  return path;
}

TEST(RecordingProcessSamples, RoundTripExactlyInTimeOrder) {
  TempDir dir;
  const std::string path = samples_recording(dir);
  std::string error;
  auto reader = RecordingReader::open(path, error);
  ASSERT_NE(reader, nullptr) << error;
  const auto got = std::get<std::vector<training::ProcessSample>>(reader->process_samples());
  ASSERT_EQ(got.size(), 3U);
  const training::ProcessSample want = full_sample(1);
  EXPECT_EQ(got[0].time_ms, want.time_ms);
  EXPECT_EQ(got[0].pid, want.pid);
  EXPECT_EQ(got[0].rank, want.rank);
  EXPECT_EQ(got[0].cpu_s, want.cpu_s);
  EXPECT_EQ(got[0].rss_bytes, want.rss_bytes);
  EXPECT_EQ(got[0].pss_bytes, want.pss_bytes);
  EXPECT_FALSE(got[0].pss_is_rss);
  EXPECT_EQ(got[0].workers, 4);
  EXPECT_EQ(got[0].workers_cpu_s, want.workers_cpu_s);
  EXPECT_EQ(got[0].workers_pss_bytes, want.workers_pss_bytes);
  EXPECT_EQ(got[0].mem_available_bytes, want.mem_available_bytes);
  EXPECT_EQ(got[0].mem_total_bytes, want.mem_total_bytes);
  EXPECT_EQ(got[0].cgroup_limit_bytes, want.cgroup_limit_bytes);
  EXPECT_EQ(got[0].cgroup_usage_bytes, want.cgroup_usage_bytes);
  EXPECT_EQ(got[1].pid, 99);
  EXPECT_TRUE(got[1].pss_is_rss);
  EXPECT_FALSE(got[1].rank || got[1].cpu_s || got[1].pss_bytes || got[1].workers_pss_bytes ||
               got[1].mem_available_bytes || got[1].cgroup_limit_bytes);
  EXPECT_EQ(got[2].time_ms, full_sample(3).time_ms);
}

TEST(RecordingProcessSamples, ExportsCsvWithMissingCellsEmpty) {
  TempDir dir;
  const std::string path = samples_recording(dir);
  std::string out, err;
  ASSERT_EQ(run_export({path, "--table", "process_samples"}, out, err), kExportOk) << err;
  EXPECT_EQ(out.substr(0, out.find('\n')),
            "timestamp,pid,rank,cpu_s,rss_bytes,pss_bytes,pss_is_rss,workers,workers_cpu_s,"
            "workers_pss_bytes,mem_available_bytes,mem_total_bytes,cgroup_limit_bytes,"
            "cgroup_usage_bytes");
  EXPECT_NE(out.find(",4242,3,13.34,3000000000,2500000001,0,4,5.5,800000000,100000000000,"
                     "200000000000,150000000000,90000000000\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(",99,,,,,1,0,,,,,,\n"), std::string::npos) << out;
}

TEST(RecordingProcessSamples, AVersionTwoRecordingHasNone) {
  TempDir dir;
  const std::string path = samples_recording(dir);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "DROP TABLE process_samples; PRAGMA user_version = 2; "
                         "UPDATE meta SET value = '2' WHERE key = 'schema_version'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  std::string error;
  auto reader = RecordingReader::open(path, error);
  ASSERT_NE(reader, nullptr) << error;
  EXPECT_TRUE(std::get<std::vector<training::ProcessSample>>(reader->process_samples()).empty());
}

}  // namespace
}  // namespace gpumon::record
