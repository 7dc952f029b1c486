// SPDX-License-Identifier: MIT
// The report's figures on a synthetic recording written by RecordingWriter, and the page's
// hostile-content handling.
#include "report/run_report.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <set>

#include "diagnose/run_data_loader.h"
#include "diagnose/throttle.h"
#include "record/recording_writer.h"
#include "record/test_support.h"
#include "report/report_diagnosis.h"
#include "report/report_html.h"
#include "report/summary.h"
#include "training/protocol.h"

namespace gpumon::report {
namespace {

using record::testing::busy_sample;
using record::testing::make_devices;
using record::testing::make_tick;
using record::testing::TempDir;

constexpr std::int64_t kStartMs = 1764446400000;
constexpr int kTicks = 100;
constexpr int kIntervalMs = 100;
const std::string kHostile = "</script><img src=x onerror=alert(1)>\xFF\xFE";

// 2 GPUs, 100 ticks 100 ms apart; GPU 1 is missing from ticks 40-59 (a gap) and is lost with
// an XID 79 at tick 80; a process with a hostile name on GPU 0.
std::string write_recording(const TempDir& dir) {
  record::RecordingOptions options;
  options.path = dir.file("run.gpumon");
  std::string error;
  auto devices = make_devices(2);
  devices[1].name = kHostile;
  auto w =
      record::RecordingWriter::create(options, record::testing::test_run_info(), devices, error);
  EXPECT_NE(w, nullptr) << error;
  for (int i = 0; i < kTicks; ++i) {
    TickSample t = make_tick(2, i, kStartMs, kIntervalMs);
    if (i >= 40 && i < 60) t.gpus.pop_back();
    if (i >= 80) t.gpus.back().lost = true;
    w->on_tick(t);
    if (i == 10) {
      ProcessSnapshot p;
      p.gpu = 0;
      p.wall_time = t.wall_time;
      GpuProcess proc;
      proc.pid = 4242;
      proc.name = kHostile;
      proc.used_memory_bytes = std::uint64_t{1} << 30;
      p.processes.push_back(proc);
      w->on_processes(p);
    }
    if (i == 80) {
      GpuEvent e;
      e.gpu = 1;
      e.kind = GpuEvent::Kind::kXid;
      e.value = 79;
      e.wall_time = t.wall_time;
      w->on_event(e);
      e.kind = GpuEvent::Kind::kLost;
      w->on_event(e);
    }
  }
  w->close();
  EXPECT_EQ(w->status().ticks_written, static_cast<std::uint64_t>(kTicks));
  return options.path;
}

RunReport load(const std::string& path, std::size_t buckets = kDefaultBuckets) {
  auto r = load_run_report(path, buckets);
  if (auto* e = std::get_if<std::string>(&r)) ADD_FAILURE() << *e;
  return std::get<RunReport>(std::move(r));
}

TEST(RunReport, SummaryFiguresMatchTheSamples) {
  TempDir dir;
  const RunReport run = load(write_recording(dir));
  ASSERT_EQ(run.gpus.size(), 2u);
  EXPECT_EQ(run.samples, 2 * kTicks - 20);
  const GpuReport& g0 = run.gpus[0];
  EXPECT_EQ(g0.samples, kTicks);
  double util = 0, sm = 0, peak = 0;
  for (int i = 0; i < kTicks; ++i) {
    const auto s = busy_sample(0, i);
    util += s.utilization_gpu_pct.value();
    sm += s.sm_active_ratio.value();
    peak = std::max(peak, static_cast<double>(s.memory_used_bytes.value()));
  }
  EXPECT_NEAR(*g0.util_pct.value(), util / kTicks, 1e-9);
  EXPECT_NEAR(*g0.sm_active_ratio.value(), sm / kTicks, 1e-4);
  EXPECT_EQ(*g0.peak_memory_bytes, peak);
  // Energy from the counter: 99 steps of 650.123 J.
  EXPECT_TRUE(g0.energy_from_counter);
  EXPECT_NEAR(*g0.energy_j, 99 * 650.123, 1e-6);
  // Throttled (sw thermal) on ticks with i % 20 >= 15: a quarter, in 5 stretches.
  EXPECT_EQ(g0.reason_samples, kTicks);
  EXPECT_EQ(g0.throttle_samples, kTicks / 4);
  EXPECT_EQ(g0.throttled.size(), 5u);
  EXPECT_EQ(g0.throttled[0].start_ms, kStartMs + 15 * kIntervalMs);
  EXPECT_EQ(g0.throttled[0].end_ms, kStartMs + 19 * kIntervalMs);
  EXPECT_FALSE(g0.lost);

  const GpuReport& g1 = run.gpus[1];
  EXPECT_EQ(g1.name, kHostile);
  EXPECT_TRUE(g1.lost);
  EXPECT_EQ(g1.xids, 1);
  ASSERT_EQ(g1.lost_intervals.size(), 1u);
  EXPECT_EQ(g1.lost_intervals[0].start_ms, kStartMs + 80 * kIntervalMs);

  const RunTotals t = run_totals(run);
  EXPECT_EQ(t.gpus, 2u);
  EXPECT_EQ(t.xids, 1);
  EXPECT_EQ(t.lost_gpus, 1);
  // The writer's start and end (wall time now) do not span these synthetic samples: the
  // samples' own span counts.
  EXPECT_DOUBLE_EQ(*t.duration_s, 9.9);
}

// 500 W for 10 s (100 ticks); the energy counter read only at 2 s and 7 s (500 W x 5 s apart),
// then going back at 8 s (a driver reload) and read again at 9 s. The counter measures 2-7 s
// and 8-9 s, power the rest: the run's edges and the step where the counter went back.
TEST(RunReport, EnergyCounterSpanPlusPowerWhereTheCounterDoesNotReach) {
  TempDir dir;
  record::RecordingOptions options;
  options.path = dir.file("energy.gpumon");
  std::string error;
  auto w = record::RecordingWriter::create(options, record::testing::test_run_info(),
                                           make_devices(1), error);
  ASSERT_NE(w, nullptr) << error;
  for (int i = 0; i < kTicks; ++i) {
    TickSample t = make_tick(1, i, kStartMs, kIntervalMs);
    auto& s = t.gpus[0];
    s.power_draw_w = 500.0;
    s.energy_mj = Reading<std::uint64_t>::missing(Missing::kNotAvailable);
    if (i == 20) s.energy_mj = std::uint64_t{1'000'000'000};
    if (i == 70) s.energy_mj = std::uint64_t{1'002'500'000};
    if (i == 80) s.energy_mj = std::uint64_t{1'000'000};
    if (i == 90) s.energy_mj = std::uint64_t{1'500'000};
    w->on_tick(t);
  }
  w->close();
  const RunReport run = load(options.path);
  const GpuReport& g = run.gpus.at(0);
  EXPECT_TRUE(g.energy_from_counter);
  // 2 s of power, 2500 J of counter, 1 s of power (going back), 500 J of counter, 0.9 s of power.
  EXPECT_NEAR(*g.energy_j, 500 * 9.9, 1e-6);
}

// 500 W and a counter read every tick (50 J per 100 ms); the recording opened 300 ms before
// its first tick and closed 200 ms after its last: those edges count at the nearest power
// reading, as a second GPU's are not while it is lost.
TEST(RunReport, EnergyCoversTheRecordingsOwnEdges) {
  TempDir dir;
  record::RecordingOptions options;
  options.path = dir.file("edges.gpumon");
  std::string error;
  auto w = record::RecordingWriter::create(options, record::testing::test_run_info(),
                                           make_devices(2), error);
  ASSERT_NE(w, nullptr) << error;
  for (int i = 0; i < kTicks; ++i) {
    TickSample t = make_tick(2, i, kStartMs, kIntervalMs);
    for (auto& s : t.gpus) {
      s.power_draw_w = 500.0;
      s.energy_mj = std::uint64_t{1'000'000'000} + static_cast<std::uint64_t>(i) * 50'000;
    }
    if (i >= 90) mark_lost(t.gpus[1]);
    w->on_tick(t);
  }
  w->close();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(options.path.c_str(), &db), SQLITE_OK);
  const std::string sql = "UPDATE meta SET value = '" + std::to_string(kStartMs - 300) +
                          "' WHERE key = 'start_time_ms'; UPDATE meta SET value = '" +
                          std::to_string(kStartMs + (kTicks - 1) * kIntervalMs + 200) +
                          "' WHERE key = 'end_time_ms';";
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  const RunReport run = load(options.path);
  EXPECT_NEAR(*run.gpus.at(0).energy_j, 99 * 50 + 500 * 0.3 + 500 * 0.2, 1e-6);
  // GPU 1: lost from tick 90, so nothing after its last reading at tick 89.
  EXPECT_NEAR(*run.gpus.at(1).energy_j, 89 * 50 + 500 * 0.3, 1e-6);
  EXPECT_DOUBLE_EQ(*run_totals(run).duration_s, 10.4);
}

// Per GPU, 100 ticks with one kind of clock event: at full clock, the power cap at 88 % and at
// 66 % of max, thermal and power cap with the SM clock unknown, and a GPU without a max clock.
TEST(RunReport, ThrottlingIsTheDiagnosissDefinition) {
  TempDir dir;
  record::RecordingOptions options;
  options.path = dir.file("throttle.gpumon");
  std::string error;
  auto devices = make_devices(5);
  devices[4].max_sm_clock_mhz = Reading<unsigned>::missing(Missing::kNotAvailable);
  auto w =
      record::RecordingWriter::create(options, record::testing::test_run_info(), devices, error);
  ASSERT_NE(w, nullptr) << error;
  const std::uint64_t thermal = kClockEventSwThermalSlowdown, cap = kClockEventSwPowerCap;
  const Reading<unsigned> unknown = Reading<unsigned>::missing(Missing::kNotSupported);
  for (int i = 0; i < kTicks; ++i) {
    TickSample t = make_tick(5, i, kStartMs, kIntervalMs);
    auto set = [&](unsigned gpu, std::uint64_t reasons, Reading<unsigned> clock) {
      t.gpus[gpu].clock_event_reasons = reasons;
      t.gpus[gpu].sm_clock_mhz = clock;
    };
    set(0, thermal, 1980U);                      // at max clock: not throttled
    set(1, i % 2 ? cap : thermal | cap, 1740U);  // 88 %: the cap no, thermal yes
    set(2, cap, 1305U);                          // 66 %: throttled
    set(3, i % 2 ? cap : thermal, unknown);      // unknown clock: thermal yes, the cap no
    set(4, i % 2 ? cap : thermal, 1305U);        // unknown max clock: likewise
    w->on_tick(t);
  }
  w->close();
  const RunReport run = load(options.path);
  ASSERT_EQ(run.gpus.size(), 5u);
  const std::int64_t expected[] = {0, kTicks / 2, kTicks, kTicks / 2, kTicks / 2};
  auto data = diagnose::load_run_data(options.path);
  ASSERT_TRUE(std::holds_alternative<diagnose::RunData>(data)) << std::get<std::string>(data);
  const auto& diagnosed = std::get<diagnose::RunData>(data);
  for (unsigned g = 0; g < 5; ++g) {
    EXPECT_EQ(run.gpus[g].reason_samples, kTicks) << "GPU " << g;
    EXPECT_EQ(run.gpus[g].throttle_samples, expected[g]) << "GPU " << g;
    // The diagnosis counts the same samples of the same recording.
    const diagnose::GpuSeries* series = diagnose::find_gpu(diagnosed, g);
    ASSERT_NE(series, nullptr);
    std::int64_t counted = 0;
    for (const auto& p : series->points) counted += samples_throttled(p, series->max_sm_clock_mhz);
    EXPECT_EQ(counted, expected[g]) << "GPU " << g;
  }
  EXPECT_TRUE(run.gpus[0].throttled.empty());
  EXPECT_EQ(run.gpus[2].throttled.size(), 1u);
}

TEST(RunReport, AGpuThatWasNotSampledLeavesAGapNotZeros) {
  TempDir dir;
  const RunReport run = load(write_recording(dir), 100);
  // 100 ticks x 100 ms: buckets of 200 ms (twice the interval), 50 of them.
  EXPECT_EQ(run.grid.width_ms, 200);
  ASSERT_EQ(run.grid.count, 50u);
  const auto& util1 = run.gpus[1].series[static_cast<std::size_t>(Series::kUtil)];
  for (int i = 40; i < 60; i += 2)
    EXPECT_EQ(util1.at(run.grid.bucket(kStartMs + i * kIntervalMs)).count, 0u) << i;
  EXPECT_EQ(util1.at(run.grid.bucket(kStartMs + 38 * kIntervalMs)).count, 2u);
  const std::string json = report_json(run);
  EXPECT_NE(json.find("null"), std::string::npos);
  const auto& util0 = run.gpus[0].series[static_cast<std::size_t>(Series::kUtil)];
  for (std::size_t i = 0; i < run.grid.count; ++i) EXPECT_EQ(util0.at(i).count, 2u) << i;
}

TEST(RunReport, TheEventsTableSaysWhatAnXidMeans) {
  TempDir dir;
  const std::string page = render_report(load(write_recording(dir)), nullptr, report_asset());
  EXPECT_NE(page.find("<td>xid</td><td>XID 79: GPU has fallen off the bus (hardware)</td>"),
            std::string::npos);
}

TEST(RunReport, HostileNamesAreEscapedEverywhereInThePage) {
  TempDir dir;
  RunReport run = load(write_recording(dir));
  // A process's device and a finding's text come from outside too.
  RankSteps rank;
  rank.pid = 7;
  rank.steps = 1;
  rank.device = kHostile;
  rank.gpu = training::map_rank_device(kHostile, nullptr, {});
  run.ranks.push_back(rank);
  ReportFinding f;
  f.id = f.title = f.summary = f.advice = f.severity = kHostile;
  f.evidence = {{kHostile, kHostile, false, kHostile}};
  f.start_ms = kStartMs;
  run.diagnosis = ReportDiagnosis{50, {{kHostile, 50, kHostile}}, {f}, true, {}};
  const std::string page = render_report(run, nullptr, report_asset());
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(page.find("\xFF"), std::string::npos);
  EXPECT_NE(page.find("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;\xEF\xBF\xBD\xEF\xBF\xBD"),
            std::string::npos);
  const std::string json = report_json(run);
  EXPECT_EQ(json.find('<'), std::string::npos);
  EXPECT_NE(json.find("\\u003c/script\\u003e"), std::string::npos);
  // Exactly the page's own elements: the data block and the two scripts (or one without uPlot).
  std::size_t scripts = 0;
  for (auto at = page.find("<script"); at != std::string::npos; at = page.find("<script", at + 1))
    ++scripts;
  EXPECT_EQ(scripts, report_asset().has_charts ? 3u : 2u);
  EXPECT_NE(
      page.find("Content-Security-Policy\" content=\"default-src 'none'; script-src 'sha256-"),
      std::string::npos);
  // Nothing to fetch (the only URLs are the SVG namespace and the uPlot notice).
  EXPECT_EQ(page.find("src=\"http"), std::string::npos);
  EXPECT_EQ(page.find("href=\"http"), std::string::npos);
  EXPECT_EQ(page.find("<link rel=\"stylesheet"), std::string::npos);
}

TEST(RunReport, TheSummarySaysWhatIsNotRecorded) {
  TempDir dir;
  const RunReport run = load(write_recording(dir));
  const auto rows = summary_rows(run_totals(run));
  auto value = [&](std::string_view label) {
    for (const auto& r : rows)
      if (r.label == label) return r.value;
    return std::string("(missing row)");
  };
  EXPECT_EQ(value("Steps"), "not recorded");
  EXPECT_EQ(value("Health score"), "not recorded");
  EXPECT_EQ(value("GPU-samples"), "180");
  EXPECT_EQ(value("Time throttled"), "25.0 %");  // GPU 1 throttles on the same ticks
  EXPECT_EQ(value("XID events"), "1");
  EXPECT_EQ(value("GPUs lost"), "1");
  // The counter advances 99 steps of 650.123 J on each GPU (the gap on GPU 1 included).
  EXPECT_EQ(value("Energy (all GPUs)"), "128.72 kJ");
}

TEST(RunReport, TrainingStepsGiveStepFiguresAndCharts) {
  TempDir dir;
  record::RecordingOptions options;
  options.path = dir.file("steps.gpumon");
  std::string error;
  auto w = record::RecordingWriter::create(options, record::testing::test_run_info(),
                                           make_devices(1), error);
  ASSERT_NE(w, nullptr) << error;
  for (int i = 0; i < kTicks; ++i) w->on_tick(make_tick(1, i, kStartMs, kIntervalMs));
  // Two ranks, 20 steps each of 0.4 s (rank 1: 0.6 s), 0.1 s of it waiting on data.
  for (int rank = 0; rank < 2; ++rank) {
    for (int i = 0; i < (rank == 0 ? 20 : 10); ++i) {
      training::Step st;
      st.pid = 100 + rank;
      st.rank = rank;
      st.step = i;
      st.cpu_step_s = rank == 0 ? 0.4 : 0.6;
      st.data_wait_s = 0.1;
      st.t_start_s = static_cast<double>(kStartMs) / 1000 + i * 0.4;
      st.t_end_s = st.t_start_s + st.cpu_step_s;
      st.received_ms = kStartMs + i * 400;
      w->on_step(st);
    }
  }
  // Rank 0's host memory, sampled once a second: 1 GiB + 0.5 GiB of workers.
  for (int i = 0; i < 8; ++i) {
    training::ProcessSample p;
    p.time_ms = kStartMs + i * 1000, p.pid = 100, p.rank = 0;
    p.pss_bytes = std::int64_t{1} << 30, p.workers_pss_bytes = std::int64_t{1} << 29;
    w->on_process_sample(p);
  }
  w->close();
  const RunReport run = load(options.path);
  EXPECT_EQ(run.steps.records, 30);
  EXPECT_EQ(run.steps.processes, 2);
  EXPECT_EQ(run.steps.steps, 20);
  const RunTotals t = run_totals(run);
  EXPECT_DOUBLE_EQ(*t.steps, 20);
  EXPECT_NEAR(*t.mean_step_s, (20 * 0.4 + 10 * 0.6) / 30, 1e-12);
  EXPECT_NEAR(*t.data_wait_share, 3.0 / 14.0, 1e-12);
  EXPECT_NEAR(*t.energy_per_step_j, *t.energy_j / 20, 1e-9);
  ASSERT_EQ(run.ranks.size(), 2u);
  EXPECT_TRUE(run.ranks[0].step_time_s.any());
  EXPECT_EQ(run.ranks[0].steps, 20);
  EXPECT_TRUE(run.ranks[0].host_gib.any());
  EXPECT_FALSE(run.ranks[1].host_gib.any()) << "not sampled: no series, not zeros";
  const auto rows = summary_rows(t);
  EXPECT_EQ(rows[3].label, "Steps");
  EXPECT_EQ(rows[3].value, "20");
  EXPECT_EQ(rows[4].value, "466.7 ms");
  EXPECT_EQ(rows[5].value, "21.4 %");
  const std::string json = report_json(run);
  EXPECT_NE(json.find("\"ranks\":[{\"label\":\"rank 0 (pid 100)\",\"rank\":0,"), std::string::npos);
  EXPECT_NE(json.find(",\"host\":{\"gapMs\":"), std::string::npos);
  EXPECT_NE(json.find("1.5"), std::string::npos);
  const std::string page = render_report(run, nullptr, report_asset());
  EXPECT_NE(page.find("30 step reports from 2 process(es)"), std::string::npos);

  // Without steps (a version-1-like run): the rows say so and the JSON has none.
  const RunReport plain = load(write_recording(dir));
  EXPECT_EQ(summary_rows(run_totals(plain))[3].value, "not recorded");
  EXPECT_NE(report_json(plain).find("\"ranks\":[]"), std::string::npos);
}

// An action survives the whole way: recorded as a rank event, judged by the doctor, marked and
// charted by the report, listed in its events table.
TEST(RunReport, TheGuardsAndTheLoadersActionsGoFromTheRecordingToDoctorAndThePage) {
  TempDir dir;
  record::RecordingOptions options;
  options.path = dir.file("actions.gpumon");
  std::string error;
  auto w = record::RecordingWriter::create(options, record::testing::test_run_info(),
                                           make_devices(1), error);
  ASSERT_NE(w, nullptr) << error;
  for (int i = 0; i < kTicks; ++i) w->on_tick(make_tick(1, i, kStartMs, kIntervalMs));
  w->on_rank_event(training::rank_event(
      kStartMs, 100, 0, "hello",
      R"({"type":"hello","pid":100,"rank":0,"device":"cpu","job":{"id":"4711","id_source":"slurm",)"
      R"("slurm_job_id":"4711"}})"));
  for (int i = 0; i < 24; ++i) {
    training::Step st;
    st.pid = 100, st.rank = 0, st.step = i, st.device = "cpu";
    st.cpu_step_s = 0.4;
    st.data_wait_s = i < 12 ? 0.2 : 0.02;
    st.t_start_s = static_cast<double>(kStartMs) / 1000 + i * 0.4;
    st.t_end_s = st.t_start_s + st.cpu_step_s;
    st.received_ms = kStartMs + i * 400;
    w->on_step(st);
  }
  const std::string split =
      R"({"type":"action","action":"oom_split","step":6,"reason":"oom","batch_size":32,)"
      R"("micro_batch_size":16,"previous_micro_batch_size":32,)"
      R"("summary":"CUDA OOM at step 6: split the batch of 32 into 2 micro-batches of 16 <ok>"})";
  w->on_rank_event(training::rank_event(kStartMs + 2400, 100, 0, "action", split));
  w->on_rank_event(training::rank_event(
      kStartMs + 4800, 100, 0, "action",
      R"({"type":"action","action":"loader_retuned","step":12,"epoch":1,"num_workers":4,)"
      R"("previous_num_workers":0,"prefetch_factor":4,"previous_prefetch_factor":2})"));
  w->close();

  // The recording keeps the message whole.
  auto data = diagnose::load_run_data(options.path);
  ASSERT_TRUE(std::holds_alternative<diagnose::RunData>(data)) << std::get<std::string>(data);
  const auto& run_data = std::get<diagnose::RunData>(data);
  std::size_t actions = 0;
  for (const auto& e : run_data.rank_events)
    if (e.kind == "action") {
      ++actions;
      EXPECT_TRUE(training::action_of(e)) << e.detail;
    }
  EXPECT_EQ(actions, 2U);
  // The doctor reports both.
  const auto d = diagnose::diagnose(run_data);
  std::set<std::string> ids;
  for (const auto& f : d.findings) ids.insert(f.id);
  EXPECT_TRUE(ids.count("oom_guard") && ids.count("loader_tuned"));

  // The report: markers, the step functions, the events table.
  RunReport run = load(options.path);
  auto diagnosis = diagnose_recording(options.path);
  ASSERT_TRUE(std::holds_alternative<ReportDiagnosis>(diagnosis));
  run.diagnosis = std::get<ReportDiagnosis>(diagnosis);
  ASSERT_EQ(run.actions.size(), 2U);
  EXPECT_EQ(run.actions[0].label(), "oom_split: micro-batch 16");
  EXPECT_EQ(run.actions[1].label(), "loader_retuned: 4 workers");
  ASSERT_EQ(run.ranks.size(), 1U);
  const auto& r = run.ranks[0];
  const std::size_t at_split = run.grid.bucket(kStartMs + 2400);
  const std::size_t at_retune = run.grid.bucket(kStartMs + 4800);
  ASSERT_EQ(r.micro_batch_size.size(), run.grid.count);
  EXPECT_EQ(r.micro_batch_size[at_split - 1], 32) << "the size it replaced, before the split";
  EXPECT_EQ(r.micro_batch_size[at_split], 16);
  EXPECT_EQ(r.micro_batch_size.back(), 16);
  EXPECT_EQ(r.loader_workers[at_retune - 1], 0);
  EXPECT_EQ(r.loader_workers[at_retune], 4);
  const std::string json = report_json(run);
  EXPECT_NE(json.find(R"("actions":[[1764446402.4,"oom_split: micro-batch 16"],)"
                      R"([1764446404.8,"loader_retuned: 4 workers"]],"micro":[)"),
            std::string::npos)
      << json.substr(0, 2000);
  const std::string page = render_report(run, nullptr, report_asset());
  EXPECT_NE(page.find("<h3>Training actions</h3>"), std::string::npos);
  EXPECT_NE(page.find("<td><code>oom_split</code></td><td>6</td><td>CUDA OOM at step 6: split "
                      "the batch of 32 into 2 micro-batches of 16 &lt;ok&gt;</td>"),
            std::string::npos);
  EXPECT_NE(page.find("OOM guard split the batch"), std::string::npos) << "the finding";
  // The job its hello named, from the recording's hello.
  EXPECT_EQ(run.jobs, std::vector<std::string>{"job 4711"});
  EXPECT_NE(page.find("<p class=\"run\">Ranks of job 4711</p>"), std::string::npos);

  // A run without actions has neither the table nor the state series.
  const RunReport plain = load(write_recording(dir));
  EXPECT_TRUE(plain.actions.empty());
  EXPECT_EQ(render_report(plain, nullptr, report_asset()).find("Training actions"),
            std::string::npos);
}

TEST(RunReport, BaselineVerdictsFollowTheThresholds) {
  RunTotals a, b;
  a.gpus = b.gpus = 8;
  a.gpu_models = b.gpu_models = "NVIDIA H200";
  a.duration_s = 100, b.duration_s = 98;  // the same length of work (within 5 %)
  a.mean_util_pct = 80, b.mean_util_pct = 70;
  a.mean_sm_active_pct = 50, b.mean_sm_active_pct = 51;
  a.energy_j = 1.2e6, b.energy_j = 1.0e6;
  a.throttle_share = 0.0, b.throttle_share = 0.3;
  a.xids = 0, b.xids = 2;
  a.mean_step_s = 0.5, b.mean_step_s = 0.505;  // 1 %: same
  a.data_wait_share = 0.2, b.data_wait_share = 0.1;
  a.health_score = 90, b.health_score = 70;
  const auto rows = compare_runs(a, b);
  auto verdict = [&](std::string_view label) {
    for (const auto& r : rows)
      if (r.label == label) return r.verdict;
    return Verdict::kNotComparable;
  };
  EXPECT_EQ(verdict("Mean GPU utilization"), Verdict::kBetter);
  EXPECT_EQ(verdict("Mean SM activity"), Verdict::kSame);
  EXPECT_EQ(verdict("Energy (all GPUs)"), Verdict::kWorse);
  EXPECT_EQ(verdict("Time throttled"), Verdict::kBetter);
  EXPECT_EQ(verdict("XID events"), Verdict::kBetter);
  EXPECT_EQ(verdict("GPUs lost"), Verdict::kSame);
  EXPECT_EQ(verdict("Highest GPU temperature"), Verdict::kMissing);
  EXPECT_EQ(verdict("Duration"), Verdict::kInfo);
  EXPECT_EQ(verdict("GPUs"), Verdict::kSame);
  EXPECT_EQ(verdict("Mean step time"), Verdict::kSame);
  EXPECT_EQ(verdict("Time waiting on data"), Verdict::kWorse);
  EXPECT_EQ(verdict("Energy per step"), Verdict::kMissing);
  // 12 kJ/s against 10.2 kJ/s: the runs have no steps, so energy per second is judged.
  EXPECT_EQ(verdict("Energy per second of run (all GPUs)"), Verdict::kWorse);
  EXPECT_EQ(verdict("Health score"), Verdict::kBetter);
  for (const auto& r : rows) {
    if (r.label == "Mean GPU utilization") {
      EXPECT_EQ(r.change, "+10.0 % (14.3 %)");
    }
  }
}

const ComparisonRow& row(const std::vector<ComparisonRow>& rows, std::string_view label) {
  for (const auto& r : rows)
    if (r.label == label) return r;
  ADD_FAILURE() << "no row " << label;
  return rows.front();
}

// The same training on the same GPUs, 75 s against 25 s: 3 times the energy is no worse.
TEST(RunReport, BaselineEnergyIsJudgedOnTheSameWork) {
  RunTotals a, b;
  a.gpus = b.gpus = 8;
  a.gpu_models = b.gpu_models = "NVIDIA H200";
  a.duration_s = 75, b.duration_s = 25;
  a.energy_j = 3 * 126000.0, b.energy_j = 126000.0;
  auto rows = compare_runs(a, b);
  EXPECT_EQ(row(rows, "Energy (all GPUs)").verdict, Verdict::kNotComparable);
  EXPECT_EQ(row(rows, "Energy (all GPUs)").why, "runs of different length (1 min 15 s vs 25.0 s)");
  EXPECT_EQ(row(rows, "Energy (all GPUs)").change, "+252.00 kJ (200.0 %)");  // shown, not judged
  EXPECT_EQ(row(rows, "Energy per second of run (all GPUs)").verdict, Verdict::kSame);
  EXPECT_EQ(row(rows, "Energy per second of run (all GPUs)").run, "5040.0 J/s");

  // With steps (3 times as many): energy per step judges, energy per second is shown.
  a.steps = 300, b.steps = 100;
  a.energy_per_step_j = 1250, b.energy_per_step_j = 1200;  // 4 % more: same
  rows = compare_runs(a, b);
  EXPECT_EQ(row(rows, "Energy per step").verdict, Verdict::kSame);
  EXPECT_EQ(row(rows, "Energy per second of run (all GPUs)").verdict, Verdict::kInfo);
  a.energy_per_step_j = 1300;
  EXPECT_EQ(row(compare_runs(a, b), "Energy per step").verdict, Verdict::kWorse);

  // The same length but not the same steps: the totals measure different work.
  a.duration_s = 25;
  rows = compare_runs(a, b);
  EXPECT_EQ(row(rows, "Energy (all GPUs)").why, "different step counts (300 vs 100)");
  a.steps = b.steps;
  a.energy_j = 1.2 * 126000.0;
  EXPECT_EQ(row(compare_runs(a, b), "Energy (all GPUs)").verdict, Verdict::kWorse);

  // Other GPUs: no energy figure is comparable.
  a.gpus = 4;
  rows = compare_runs(a, b);
  for (const char* label :
       {"Energy per step", "Energy per second of run (all GPUs)", "Energy (all GPUs)"}) {
    EXPECT_EQ(row(rows, label).verdict, Verdict::kNotComparable) << label;
    EXPECT_EQ(row(rows, label).why, "different GPUs (4 x NVIDIA H200 vs 8 x NVIDIA H200)");
  }
  EXPECT_EQ(row(rows, "GPUs").verdict, Verdict::kInfo);
  EXPECT_EQ(verdict_text(Verdict::kNotComparable), "not comparable");
}

}  // namespace
}  // namespace gpumon::report
