// SPDX-License-Identifier: MIT
#include "diagnose/live/live_diagnoser.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "diagnose/live/live_findings.h"
#include "diagnose/live/live_metrics.h"
#include "diagnose/test_builder.h"
#include "training/protocol.h"

namespace gpumon::diagnose {
namespace {

using namespace testing;

WallClock::time_point at(std::int64_t ms) {
  return WallClock::time_point(std::chrono::milliseconds(ms));
}

// The samples of `run`'s GPUs as ticks (one GPU per tick is enough for the window).
void feed(LiveDiagnoser& live, const RunData& run) {
  for (const auto& g : run.gpus)
    for (const auto& p : g.points) {
      TickSample t;
      t.wall_time = at(p.t_ms);
      DeviceSample& s = t.gpus.emplace_back();
      s.index = g.gpu, s.wall_time = t.wall_time, s.lost = p.lost;
      if (p.util_pct) s.utilization_gpu_pct = static_cast<unsigned>(*p.util_pct);
      if (p.sm_active) s.sm_active_ratio = *p.sm_active;
      if (p.mem_used_bytes) s.memory_used_bytes = static_cast<std::uint64_t>(*p.mem_used_bytes);
      if (p.mem_total_bytes) s.memory_total_bytes = static_cast<std::uint64_t>(*p.mem_total_bytes);
      if (p.sm_clock_mhz) s.sm_clock_mhz = static_cast<unsigned>(*p.sm_clock_mhz);
      if (p.clock_reasons) s.clock_event_reasons = *p.clock_reasons;
      live.on_tick(t);
    }
  for (const auto& e : run.rank_events) live.on_rank_event(e);
  for (const auto& s : run.steps) live.on_step(s);
}

GpuEvent xid(unsigned gpu, std::uint64_t value, std::int64_t ms) {
  GpuEvent e;
  e.gpu = gpu, e.kind = GpuEvent::Kind::kXid, e.value = value, e.wall_time = at(ms);
  return e;
}

Finding finding(std::string id, std::vector<unsigned> gpus, std::vector<std::int64_t> ranks = {}) {
  Finding f;
  f.id = std::move(id), f.gpus = std::move(gpus), f.ranks = std::move(ranks);
  return f;
}

TEST(CompareFindings, AGpuJoiningAFindingChangesItNeitherClearsNorAppears) {
  Diagnosis one, two, gone, other;
  one.findings = {finding("xid", {0})};
  two.findings = {finding("xid", {0, 1})};
  other.findings = {finding("xid", {3})};
  auto c = compare_findings(one, two);
  EXPECT_TRUE(c.appeared.empty());
  EXPECT_TRUE(c.cleared.empty()) << "cleared only when the condition is gone";
  ASSERT_EQ(c.changed.size(), 1u);
  EXPECT_EQ(c.changed[0].gpus, (std::vector<unsigned>{0, 1}));
  c = compare_findings(two, two);
  EXPECT_TRUE(c.appeared.empty() && c.cleared.empty() && c.changed.empty());
  c = compare_findings(two, gone);
  ASSERT_EQ(c.cleared.size(), 1u);
  EXPECT_EQ(c.cleared[0].gpus, (std::vector<unsigned>{0, 1}));
  c = compare_findings(one, other);  // another GPU's XID: a finding of its own
  EXPECT_EQ(c.appeared.size(), 1u);
  EXPECT_EQ(c.cleared.size(), 1u);
}

TEST(CompareFindings, RanksAndFindingsWithoutSubjectsMatchToo) {
  Diagnosis a, b;
  a.findings = {finding("rank_wait", {}, {1}), finding("hang", {})};
  b.findings = {finding("rank_wait", {}, {1, 2}), finding("hang", {})};
  const auto c = compare_findings(a, b);
  EXPECT_TRUE(c.appeared.empty());
  EXPECT_TRUE(c.cleared.empty());
  EXPECT_EQ(c.changed.size(), 1u);
}

TEST(LiveDiagnoser, EmptyBeforeTheFirstEvaluation) {
  LiveDiagnoser live;
  EXPECT_TRUE(live.latest()->findings.empty());
  EXPECT_EQ(live.latest()->health_score, 100);
  EXPECT_FALSE(live.evaluate_now());
  EXPECT_EQ(live.evaluations(), 1u);
}

TEST(LiveDiagnoser, XidAppearsThenClearsWhenItLeavesTheWindow) {
  LiveDiagnoserOptions o;
  o.window.span = std::chrono::seconds(60);
  LiveDiagnoser live(o);
  std::vector<FindingChange> changes;
  live.add_listener([&](const Diagnosis&, const FindingChange& c) { changes.push_back(c); });
  RunData run;
  add_gpu(run, 0, 100);  // 10 s of healthy samples
  feed(live, run);
  live.on_event(xid(0, 79, kT0Ms + 5000));
  EXPECT_TRUE(live.evaluate_now());
  ASSERT_EQ(changes.size(), 1u);
  ASSERT_EQ(changes[0].appeared.size(), 1u);
  EXPECT_EQ(changes[0].appeared[0].id, "xid");
  EXPECT_EQ(changes[0].appeared[0].gpus, std::vector<unsigned>{0});
  EXPECT_LT(live.latest()->health_score, 100);
  EXPECT_FALSE(live.evaluate_now()) << "the same finding again is no change";
  EXPECT_EQ(changes.size(), 1u);

  RunData later;  // two minutes later: the event is out of the 60 s window
  add_gpu(later, 0, 10, 100, [](GpuPoint& p, int) { p.t_ms += 120000; });
  feed(live, later);
  EXPECT_TRUE(live.evaluate_now());
  ASSERT_EQ(changes.size(), 2u);
  ASSERT_EQ(changes[1].cleared.size(), 1u);
  EXPECT_EQ(changes[1].cleared[0].id, "xid");
  EXPECT_EQ(live.latest()->health_score, 100);
}

TEST(LiveDiagnoser, DataLoaderStallFromSteps) {
  RunData run;
  add_gpu(run, 0, 600, 100, [](GpuPoint& p, int i) { p.util_pct = i % 2 ? 90 : 20; });
  add_rank(run, 10, 0, 1, 500, 0.1, [&](training::Step& s, int) {
    s.data_wait_s = 0.04;
    s.gpu_step_s = 0.06;
  });
  LiveDiagnoser live;
  feed(live, run);
  live.evaluate_now();
  const Finding* f = find(*live.latest(), "data_loader_stall");
  ASSERT_NE(f, nullptr) << warnings(*live.latest());
  EXPECT_EQ(f->ranks, std::vector<std::int64_t>{0});
  EXPECT_EQ(f->gpus, std::vector<unsigned>{0}) << "the hello maps the rank to GPU 0";
}

TEST(LiveWindow, HelloOutlivesTheWindowUntilTheProcessLeaves) {
  LiveWindowLimits l;
  l.span = std::chrono::seconds(10);
  LiveWindow w(l);
  RunData run;
  add_rank(run, 10, 0, 1, 1, 0.1);
  w.add_rank_event(run.rank_events.at(0));
  training::Step s = run.steps.at(0);
  s.received_ms = kT0Ms + 60000;
  w.add_step(s);
  w.prune();
  EXPECT_EQ(w.run_data().rank_events.size(), 1u) << "the hello of a live process stays";
  w.add_rank_event({kT0Ms + 61000, 10, 0, "bye", "{}"});
  s.received_ms = kT0Ms + 80000;
  w.add_step(s);
  w.prune();
  EXPECT_TRUE(w.run_data().rank_events.empty()) << "gone once its bye left the window";
}

TEST(LiveDiagnoser, AHangOutlastsTheWindow) {
  LiveDiagnoserOptions o;
  o.window.span = std::chrono::minutes(10);
  LiveDiagnoser live(o);
  RunData run;
  add_gpu(run, 0, 100, 1000);         // samples every second ...
  add_rank(run, 10, 0, 1, 300, 0.1);  // ... 30 s of steps, then nothing
  feed(live, run);
  RunData later;  // 20 minutes of samples after the last step: the steps left the window
  add_gpu(later, 0, 1200, 1000, [](GpuPoint& p, int) { p.t_ms += 100000; });
  feed(live, later);
  live.evaluate_now();
  const Finding* f = find(*live.latest(), "hang", Severity::kCritical);
  ASSERT_NE(f, nullptr) << warnings(*live.latest());
  EXPECT_EQ(f->ranks, std::vector<std::int64_t>{0});

  live.on_rank_event({kT0Ms + 1400000, 10, 0, "disconnect", "{}"});  // it leaves; 10 min on
  RunData gone;
  add_gpu(gone, 0, 700, 1000, [](GpuPoint& p, int) { p.t_ms += 1401000; });
  feed(live, gone);
  live.evaluate_now();
  EXPECT_EQ(find(*live.latest(), "hang", Severity::kInfo), nullptr) << warnings(*live.latest());
}

TEST(LiveWindow, BoundedWhateverTheRate) {
  LiveWindowLimits l;
  l.max_points = 1000, l.max_steps = 500;
  LiveWindow w(l);
  for (int i = 0; i < 5000; ++i) {  // 8 GPUs at 1 kHz: far more than the bound
    TickSample t;
    t.wall_time = at(kT0Ms + i);
    for (unsigned g = 0; g < 8; ++g)
      t.gpus.emplace_back().index = g, t.gpus.back().wall_time = t.wall_time;
    w.add_tick(t);
    training::Step s;
    s.received_ms = kT0Ms + i;
    w.add_step(s);
  }
  EXPECT_LE(w.points(), 1000u);
  EXPECT_GE(w.points(), 992u);
  EXPECT_EQ(w.steps(), 500u);
  const RunData run = w.run_data();
  ASSERT_EQ(run.gpus.size(), 8u);
  for (const auto& g : run.gpus) EXPECT_EQ(g.points.size(), 125u) << "an even share each";
}

TEST(LiveDiagnoser, TheGuardsAndTheLoadersActionsArePushedAsFindings) {
  RunData run;
  add_gpu(run, 0, 600);
  add_rank(run, 10, 0, 1, 500, 0.1);
  run.rank_events.push_back(training::rank_event(
      kT0Ms + 20000, 10, 0, "action",
      R"({"type":"action","action":"oom_split","step":200,"reason":"predicted",)"
      R"("batch_size":32,"micro_batch_size":16})"));
  run.rank_events.push_back(training::rank_event(
      kT0Ms + 30000, 10, 0, "action",
      R"({"type":"action","action":"loader_retuned","step":300,"num_workers":4,)"
      R"("previous_num_workers":0,"prefetch_factor":2,"previous_prefetch_factor":2})"));
  LiveDiagnoser live;
  feed(live, run);
  live.evaluate_now();
  const Finding* guard = find(*live.latest(), "oom_guard", Severity::kInfo);
  ASSERT_NE(guard, nullptr);
  EXPECT_EQ(guard->gpus, std::vector<unsigned>{0});
  ASSERT_NE(find(*live.latest(), "loader_tuned", Severity::kInfo), nullptr);
  const auto pushed = nlohmann::json::parse(findings_message(*live.latest()));
  std::set<std::string> ids;
  for (const auto& f : pushed["findings"]) ids.insert(f["id"].get<std::string>());
  EXPECT_TRUE(ids.count("oom_guard") && ids.count("loader_tuned")) << pushed.dump();
  EXPECT_EQ(pushed["health_score"], 100) << "info findings cost no points";
}

TEST(LiveFindings, CompactMessageAndLogLine) {
  Diagnosis d;
  d.health_score = 72;
  Finding& f = d.findings.emplace_back();
  f.id = "xid", f.severity = Severity::kCritical, f.summary = "XID 79 on GPU 1";
  f.gpus = {1}, f.ranks = {3};
  const auto j = nlohmann::json::parse(findings_message(d));
  EXPECT_EQ(j["type"], "findings");
  EXPECT_EQ(j["health_score"], 72);
  EXPECT_EQ(j["findings"][0]["id"], "xid");
  EXPECT_EQ(j["findings"][0]["severity"], "critical");
  EXPECT_EQ(j["findings"][0]["gpus"][0], 1);
  EXPECT_EQ(findings_message(d).find('\n'), std::string::npos);
  EXPECT_TRUE(findings_message(d).starts_with(R"({"type":"findings","health_score":72,)"));
  EXPECT_EQ(finding_log_line(f, false, kT0Ms),
            "2025-11-29T23:46:40.000Z critical xid gpu 1 rank 3: XID 79 on GPU 1");
  EXPECT_EQ(finding_log_line(f, true, kT0Ms).substr(25, 12), "cleared xid ");
}

TEST(LiveMetrics, OneSeriesPerGpuOrRank) {
  Diagnosis d;
  d.health_score = 50;
  Finding& a = d.findings.emplace_back();
  a.id = "xid", a.severity = Severity::kCritical, a.gpus = {0, 1}, a.ranks = {3};
  Finding& b = d.findings.emplace_back();
  b.id = "straggler", b.ranks = {2};
  Finding& c = d.findings.emplace_back();
  c.id = "hang";
  const std::string t = diagnosis_metrics_text(d);
  EXPECT_NE(t.find("gpumon_health_score 50\n"), std::string::npos) << t;
  EXPECT_NE(
      t.find("gpumon_diagnosis_active{id=\"xid\",severity=\"critical\",gpu=\"0\",rank=\"3\"} 1\n"),
      std::string::npos)
      << t;
  EXPECT_NE(t.find("{id=\"xid\",severity=\"critical\",gpu=\"1\",rank=\"3\"} 1\n"),
            std::string::npos);
  EXPECT_NE(t.find("{id=\"straggler\",severity=\"warning\",rank=\"2\"} 1\n"), std::string::npos);
  EXPECT_NE(t.find("{id=\"hang\",severity=\"warning\"} 1\n"), std::string::npos);
  EXPECT_EQ(diagnosis_metrics_text(Diagnosis{}).find("gpumon_diagnosis_active{"),
            std::string::npos);
}

// Sinks fed from two threads while the diagnoser thread evaluates every 5 ms (run under TSan).
TEST(LiveDiagnoser, ThreadedFeedAndEvaluate) {
  LiveDiagnoserOptions o;
  o.period = std::chrono::milliseconds(5);
  LiveDiagnoser live(o);
  std::atomic<int> calls{0};
  live.add_listener([&](const Diagnosis&, const FindingChange&) { ++calls; });
  live.start();
  std::thread sampler([&] {
    for (int i = 0; i < 400; ++i) {
      TickSample t;
      t.wall_time = at(kT0Ms + i * 100);
      t.gpus.emplace_back().index = 0;
      t.gpus.back().wall_time = t.wall_time;
      t.gpus.back().utilization_gpu_pct = 90u;
      live.on_tick(t);
      if (i == 200) live.on_event(xid(0, 79, kT0Ms + i * 100));
    }
  });
  std::thread agent([&] {
    for (int i = 0; i < 400; ++i) {
      training::Step s;
      s.received_ms = kT0Ms + i * 100, s.pid = 10, s.step = i, s.cpu_step_s = 0.1;
      live.on_step(s);
      (void)live.latest();
    }
  });
  sampler.join();
  agent.join();
  live.evaluate_now();
  live.stop();
  live.stop();
  EXPECT_GE(live.evaluations(), 1u);
  EXPECT_GE(calls.load(), 1) << "the xid appeared";
}

// The cost the header and docs/PERFORMANCE.md quote: 8 GPUs x 10 Hz x 10 min + 8 ranks x 10
// steps/s x 10 min.
TEST(LiveDiagnoserCost, EightGpusTenMinutes) {
  RunData run;
  for (unsigned g = 0; g < 8; ++g) add_gpu(run, g, 6000);
  for (int r = 0; r < 8; ++r) add_rank(run, 100 + r, r, 8, 6000, 0.1);
  LiveDiagnoser live;
  feed(live, run);
  live.evaluate_now();  // warm
  double best = 1e9;
  for (int i = 0; i < 3; ++i) {
    live.evaluate_now();
    best = std::min(best, live.last_evaluation_s());
  }
  // The figure is printed, not checked: a ThreadSanitizer build beside other work takes 20 s
  // and more, a Release build about 0.1 s (docs/PERFORMANCE.md).
  std::printf("[ cost ] one live evaluation, 48000 samples + 48000 steps: %.1f ms\n", best * 1000);
  EXPECT_EQ(live.latest()->findings.size(), 0u) << warnings(*live.latest());
}

}  // namespace
}  // namespace gpumon::diagnose

namespace gpumon::diagnose {
namespace {

TEST(LiveDiagnoser, AHostMemoryLeakFromTheProcessSamples) {
  LiveDiagnoser live{LiveDiagnoserOptions{}};
  RunData run;
  testing::add_rank(run, 10, 0, 1, 300, 0.1);
  for (const auto& e : run.rank_events) live.on_rank_event(e);
  for (const auto& s : run.steps) live.on_step(s);
  for (int i = 0; i <= 30; ++i) {
    training::ProcessSample p;
    p.time_ms = testing::kT0Ms + i * 1000, p.pid = 10, p.rank = 0, p.cpu_s = i;
    p.pss_bytes = static_cast<std::int64_t>(0.24e9 + i * 0.072e9);
    p.mem_available_bytes = static_cast<std::int64_t>(8e9 - i * 0.072e9);
    live.on_process_sample(p);
  }
  live.evaluate_now();
  const auto d = live.latest();
  const Finding* f = testing::find(*d, "host_memory_leak");
  ASSERT_NE(f, nullptr) << testing::warnings(*d);
  EXPECT_EQ(f->ranks, std::vector<std::int64_t>{0});
}

TEST(LiveWindow, ProcessSamplesAgeOutWithTheWindow) {
  LiveWindowLimits l;
  l.span = std::chrono::seconds(10);
  LiveWindow w(l);
  for (int i = 0; i <= 30; ++i) {
    training::ProcessSample p;
    p.time_ms = testing::kT0Ms + i * 1000, p.pid = 10;
    w.add_process_sample(p);
  }
  w.prune();
  EXPECT_EQ(w.run_data().process_samples.size(), 11u);
}

}  // namespace
}  // namespace gpumon::diagnose
