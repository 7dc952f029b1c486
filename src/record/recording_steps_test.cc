// SPDX-License-Identifier: MIT
// Training steps and rank events (schema version 2): written, read and exported exactly, and
// version-1 recordings (no steps table) still read.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>
#include <sstream>

#include "record/export_command.h"
#include "record/recording_reader.h"
#include "record/recording_writer.h"
#include "record/test_support.h"

namespace gpumon::record {
namespace {

using testing::TempDir;

training::Step full_step(std::int64_t n) {
  training::Step s;
  s.received_ms = 1764446400000 + n;
  s.pid = 4242;
  s.rank = 3;
  s.local_rank = 1;
  s.world_size = 8;
  s.device = "cuda:1";
  s.step = n;
  s.t_start_s = 1764446400.125 + static_cast<double>(n) * 0.1;
  s.t_end_s = s.t_start_s + 0.0987654321;
  s.cpu_step_s = 0.0987654321;
  s.gpu_step_s = 0.091;
  s.data_wait_s = 0.0123;
  s.allocated_bytes = 1234567890123;
  s.reserved_bytes = 2000000000000;
  s.active_bytes = 1234567890000;
  s.inactive_split_bytes = 7;
  s.allocated_peak_bytes = 1500000000000;
  s.reserved_peak_bytes = 2100000000000;
  s.num_alloc_retries = 2;
  s.num_ooms = 0;
  return s;
}

// A CPU-only process that times no fetch: no GPU time, no allocator, no data wait (NULL).
training::Step bare_step(std::int64_t n) {
  training::Step s;
  s.received_ms = 1764446500000;
  s.pid = 99;
  s.step = n;
  s.t_start_s = 1764446500.5;
  s.t_end_s = 1764446500.75;
  s.cpu_step_s = 0.25;
  return s;
}

std::string steps_recording(const TempDir& dir) {
  const std::string path = dir.file("steps.gpumon");
  std::string error;
  auto w = RecordingWriter::create({.path = path}, testing::test_run_info(),
                                   testing::make_devices(1), error);
  EXPECT_NE(w, nullptr) << error;
  w->on_rank_event({1764446399000, 4242, 3, "hello", R"({"type":"hello","rank":3})"});
  for (int i = 1; i <= 3; ++i) w->on_step(full_step(i));
  w->on_step(bare_step(1));
  w->on_rank_event({1764446501000, 99, std::nullopt, "disconnect", "{}"});
  w->close();
  EXPECT_EQ(w->status().steps_written, 4U);
  return path;
}

void expect_same(const training::Step& a, const training::Step& b) {
  EXPECT_EQ(a.received_ms, b.received_ms);
  EXPECT_EQ(a.pid, b.pid);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.local_rank, b.local_rank);
  EXPECT_EQ(a.world_size, b.world_size);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.t_start_s, b.t_start_s);  // exactly: SQLite REAL is the same double
  EXPECT_EQ(a.t_end_s, b.t_end_s);
  EXPECT_EQ(a.cpu_step_s, b.cpu_step_s);
  EXPECT_EQ(a.gpu_step_s, b.gpu_step_s);
  EXPECT_EQ(a.data_wait_s, b.data_wait_s);
  EXPECT_EQ(a.allocated_bytes, b.allocated_bytes);
  EXPECT_EQ(a.reserved_bytes, b.reserved_bytes);
  EXPECT_EQ(a.active_bytes, b.active_bytes);
  EXPECT_EQ(a.inactive_split_bytes, b.inactive_split_bytes);
  EXPECT_EQ(a.allocated_peak_bytes, b.allocated_peak_bytes);
  EXPECT_EQ(a.reserved_peak_bytes, b.reserved_peak_bytes);
  EXPECT_EQ(a.num_alloc_retries, b.num_alloc_retries);
  EXPECT_EQ(a.num_ooms, b.num_ooms);
}

int run_export(const std::vector<std::string>& args, std::string& out, std::string& err) {
  std::ostringstream o, e;
  const int rc = run_export_command(args, o, e);
  out = o.str();
  err = e.str();
  return rc;
}

TEST(RecordingSteps, RoundTripExactlyInEndTimeOrder) {
  TempDir dir;
  const std::string path = steps_recording(dir);
  std::string error;
  auto reader = RecordingReader::open(path, error);
  ASSERT_NE(reader, nullptr) << error;
  auto steps = std::get<std::vector<training::Step>>(reader->steps());
  ASSERT_EQ(steps.size(), 4U);
  for (int i = 0; i < 3; ++i) expect_same(steps[i], full_step(i + 1));
  expect_same(steps[3], bare_step(1));
  auto events = std::get<std::vector<training::RankEvent>>(reader->rank_events());
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[0].kind, "hello");
  EXPECT_EQ(events[0].rank, 3);
  EXPECT_EQ(events[0].detail, R"({"type":"hello","rank":3})");
  EXPECT_EQ(events[1].kind, "disconnect");
  EXPECT_EQ(events[1].rank, std::nullopt);
}

TEST(RecordingSteps, ExportsCsvAndJsonl) {
  TempDir dir;
  const std::string path = steps_recording(dir);
  std::string out, err;
  ASSERT_EQ(run_export({path, "--table", "steps"}, out, err), kExportOk) << err;
  std::istringstream lines(out);
  std::string header, first;
  std::getline(lines, header);
  std::getline(lines, first);
  EXPECT_EQ(header,
            "timestamp,pid,rank,local_rank,world_size,device,step,t_start_s,t_end_s,cpu_step_s,gpu_"
            "step_s,"
            "data_wait_s,allocated_bytes,reserved_bytes,active_bytes,inactive_split_bytes,"
            "allocated_peak_bytes,reserved_peak_bytes,num_alloc_retries,num_ooms");
  EXPECT_EQ(first,
            "2025-11-29T20:00:00.324Z,4242,3,1,8,cuda:1,1,1764446400.225,1764446400.3237653,0."
            "0987654321,0.091,0.0123,"
            "1234567890123,2000000000000,1234567890000,7,1500000000000,2100000000000,2,0");
  ASSERT_EQ(run_export({path, "--steps", "--format", "jsonl"}, out, err), kExportOk) << err;
  const std::string last = out.substr(out.rfind('{'));
  EXPECT_EQ(
      last,
      R"({"timestamp":"2025-11-29T20:01:40.750Z","pid":99,"rank":null,"local_rank":null,"world_size":null,"device":null,)"
      R"("step":1,"t_start_s":1764446500.5,"t_end_s":1764446500.75,"cpu_step_s":0.25,)"
      R"("gpu_step_s":null,"data_wait_s":null,"allocated_bytes":null,"reserved_bytes":null,)"
      R"("active_bytes":null,"inactive_split_bytes":null,"allocated_peak_bytes":null,)"
      R"("reserved_peak_bytes":null,"num_alloc_retries":null,"num_ooms":null})"
      "\n");
  ASSERT_EQ(run_export({path, "--table=rank_events", "--format=jsonl"}, out, err), kExportOk);
  EXPECT_EQ(out.substr(0, out.find('\n')),
            R"({"timestamp":"2025-11-29T19:59:59.000Z","pid":4242,"rank":3,"kind":"hello",)"
            R"("detail":{"type":"hello","rank":3}})");
  EXPECT_EQ(run_export({path, "--steps", "--gpu", "0"}, out, err), kExportUsage);
  EXPECT_EQ(run_export({path, "--table", "nope"}, out, err), kExportUsage);
}

TEST(RecordingSteps, AVersionOneRecordingHasNoSteps) {
  TempDir dir;
  const std::string path = steps_recording(dir);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "DROP TABLE steps; DROP TABLE rank_events; PRAGMA user_version = 1; "
                         "UPDATE meta SET value = '1' WHERE key = 'schema_version'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  std::string error;
  auto reader = RecordingReader::open(path, error);
  ASSERT_NE(reader, nullptr) << error;
  EXPECT_TRUE(std::get<std::vector<training::Step>>(reader->steps()).empty());
  EXPECT_TRUE(std::get<std::vector<training::RankEvent>>(reader->rank_events()).empty());
  std::string out, err;
  ASSERT_EQ(run_export({path, "--steps", "--format", "jsonl"}, out, err), kExportOk) << err;
  EXPECT_EQ(out, "");
  ASSERT_EQ(run_export({path}, out, err), kExportOk) << err;  // its samples still export
  EXPECT_NE(out.find("timestamp,gpu"), std::string::npos);
}

// A process flooding steps between two commits loses only its own beyond its share, the
// recording names it in a steps_lost event, and no GPU tick and no other process's step is lost.
TEST(RecordingSteps, AFloodingProcessLosesOnlyItsOwnSteps) {
  TempDir dir;
  const std::string path = dir.file("flood.gpumon");
  std::string error;
  // No commit before close(): everything below waits in the queues at once.
  auto w = RecordingWriter::create(
      {.path = path, .flush_interval = std::chrono::hours(1), .step_queue_capacity = 1000},
      testing::test_run_info(), testing::make_devices(2), error);
  ASSERT_NE(w, nullptr) << error;
  w->on_rank_event({1764446399000, 4242, 3, "hello", R"({"type":"hello","rank":3})"});
  w->on_rank_event({1764446399000, 77, 0, "hello", R"({"type":"hello","rank":0})"});
  for (int i = 0; i < 20000; ++i) {
    training::Step flood = full_step(i);
    if (i % 50 == 0) {
      training::Step good = bare_step(i / 50);
      good.pid = 77;
      good.rank = 0;
      w->on_step(good);
      w->on_tick(testing::make_tick(2, i / 50, 1764446400000, 100));
    }
    w->on_step(flood);
  }
  w->close();
  const RecordingStatus status = w->status();
  EXPECT_EQ(status.ticks_written, 400U);
  EXPECT_EQ(status.steps_written, 400U + 500U);  // all of pid 77's; pid 4242 its half
  EXPECT_EQ(status.dropped, 20000U - 500U);

  auto reader = RecordingReader::open(path, error);
  ASSERT_NE(reader, nullptr) << error;
  const auto steps = std::get<std::vector<training::Step>>(reader->steps());
  std::map<std::int64_t, int> per_pid;
  for (const auto& s : steps) ++per_pid[s.pid];
  EXPECT_EQ(per_pid[77], 400);
  EXPECT_EQ(per_pid[4242], 500);
  const auto events = std::get<std::vector<training::RankEvent>>(reader->rank_events());
  std::vector<training::RankEvent> lost;
  for (const auto& e : events)
    if (e.kind == "steps_lost") lost.push_back(e);
  ASSERT_EQ(lost.size(), 1U);
  EXPECT_EQ(lost[0].pid, 4242);
  EXPECT_EQ(lost[0].rank, 3);
  EXPECT_NE(lost[0].detail.find(R"("steps":19500)"), std::string::npos) << lost[0].detail;
}

}  // namespace
}  // namespace gpumon::record
