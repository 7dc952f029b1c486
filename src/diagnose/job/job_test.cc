// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "diagnose/job/clock_offset.h"
#include "diagnose/job/job_diagnosis.h"
#include "diagnose/job/job_run.h"
#include "diagnose/test_builder.h"
#include "training/protocol.h"

namespace gpumon::diagnose {
namespace {

using testing::add_gpu;
using testing::add_rank;
using testing::kT0Ms;

constexpr int kSteps = 300;
constexpr double kStep = 0.1;  // s

struct NodeSpec {
  std::string host;
  int ranks = 2;
  double clock_offset_s = 0;  // the node's clock ahead of the reference by this much
  std::function<void(training::Step&, int local, int i)> step;
  std::function<void(GpuPoint&, int local, int i)> point;
  std::string job = "4711";
  int samples = kSteps;  // GPU samples, every 100 ms
};

NodeSpec spec(std::string host) {
  NodeSpec s;
  s.host = std::move(host);
  return s;
}

// A node of a lock-step job: `ranks` ranks on GPUs 0.., rank = node * ranks + local, every step
// ending at the same (true) time on every node; GPU samples every 100 ms.
RunData node_data(int node, int world, const NodeSpec& spec) {
  RunData run;
  run.hostname = spec.host;
  run.kind = RunData::Kind::kRecording;
  const auto off_ms = std::llround(spec.clock_offset_s * 1000);
  for (int l = 0; l < spec.ranks; ++l) {
    add_gpu(run, static_cast<unsigned>(l), spec.samples, 100, [&](GpuPoint& p, int i) {
      p.t_ms += off_ms;
      if (spec.point) spec.point(p, l, i);
    });
    const std::int64_t pid = 1000 + l, rank = node * spec.ranks + l;
    add_rank(run, pid, rank, world, kSteps, kStep, [&](training::Step& s, int i) {
      s.device = "cuda:" + std::to_string(l);
      s.local_rank = l;
      s.t_start_s += spec.clock_offset_s, s.t_end_s += spec.clock_offset_s;
      s.received_ms = std::llround(s.t_end_s * 1000);
      if (spec.step) spec.step(s, l, i);
    });
    // add_rank's hello names cuda:RANK; this node's GPUs are 0..ranks-1.
    for (auto& e : run.rank_events)
      if (e.pid == pid && e.kind == "hello")
        e = training::rank_event(
            kT0Ms + off_ms, pid, rank, "hello",
            R"({"type":"hello","pid":)" + std::to_string(pid) + R"(,"rank":)" +
                std::to_string(rank) + R"(,"world_size":)" + std::to_string(world) +
                R"(,"device":"cuda:)" + std::to_string(l) + R"(","pci_bus_id":"0000:0)" +
                std::to_string(l) + R"(:00.0","job":{"id":")" + spec.job + R"("}})");
  }
  std::erase_if(run.steps, [](const training::Step& s) { return !std::isfinite(s.t_end_s); });
  std::stable_sort(run.steps.begin(), run.steps.end(),
                   [](const auto& a, const auto& b) { return a.t_end_s < b.t_end_s; });
  finish_run_data(run);
  return run;
}

std::variant<JobRun, std::string> job_of(const std::vector<NodeSpec>& specs) {
  int world = 0;
  for (const auto& s : specs) world += s.ranks;
  std::vector<NodeRun> nodes;
  for (std::size_t k = 0; k < specs.size(); ++k)
    nodes.push_back(make_node(node_data(static_cast<int>(k), world, specs[k]),
                              "/runs/" + specs[k].host + ".gpumon"));
  return join_nodes(std::move(nodes));
}

JobRun joined(const std::vector<NodeSpec>& specs) {
  auto j = job_of(specs);
  if (auto* e = std::get_if<std::string>(&j)) ADD_FAILURE() << *e;
  return std::get<JobRun>(std::move(j));
}

const Finding* find(const JobDiagnosis& d, const std::string& id) {
  return testing::find(d.across, id);
}

std::vector<NodeSpec> four_nodes() {
  return {spec("node-a"), spec("node-b"), spec("node-c"), spec("node-d")};
}

TEST(ClockOffset, LockStepEndsGiveTheOffsetAndItsSpread) {
  RunData a = node_data(0, 4, spec("a"));
  auto sb = spec("b");
  sb.clock_offset_s = 1.25;
  RunData b = node_data(1, 4, sb);
  const auto c = estimate_clock_offset(b.steps, a.steps, 20);
  EXPECT_TRUE(c.applied) << c.why_not;
  EXPECT_NEAR(c.offset_s, 1.25, 1e-6);
  EXPECT_NEAR(*c.spread_s, 0, 1e-6);
  EXPECT_NEAR(*c.period_s, kStep, 1e-6);
  EXPECT_EQ(c.common_steps, kSteps);
}

TEST(ClockOffset, StepsThatDoNotLineUpSetNoClock) {
  RunData a = node_data(0, 4, spec("a"));
  // Node b's ranks run at their own pace: its step N ends ever later than a's.
  auto sb = spec("b");
  sb.step = [](training::Step& s, int, int i) { s.t_end_s += 0.05 * i, s.t_start_s += 0.05 * i; };
  RunData b = node_data(1, 4, sb);
  const auto c = estimate_clock_offset(b.steps, a.steps, 20);
  EXPECT_FALSE(c.applied);
  EXPECT_EQ(c.offset_s, 0);
  EXPECT_NE(c.why_not.find("lock step"), std::string::npos) << c.why_not;
}

TEST(ClockOffset, TooFewCommonStepsSayHowMany) {
  RunData a = node_data(0, 4, spec("a"));
  RunData b = node_data(1, 4, spec("b"));
  std::erase_if(b.steps, [](const training::Step& s) { return s.step >= 5; });
  const auto c = estimate_clock_offset(b.steps, a.steps, 20);
  EXPECT_FALSE(c.applied);
  EXPECT_NE(c.why_not.find("only 5 step numbers"), std::string::npos) << c.why_not;
}

TEST(JobRun, NodesAreNamedOrderedAndSetToRankZerosClock) {
  auto specs = four_nodes();
  specs[2].clock_offset_s = -3.5;  // node-c's clock is behind
  specs[1].clock_offset_s = 0.75;
  // Given out of order: node-d's file first.
  std::swap(specs[0], specs[3]);
  int world = 8;
  std::vector<NodeRun> nodes;
  const std::vector<int> index = {3, 1, 2, 0};  // specs[i] is node index[i]
  for (std::size_t i = 0; i < specs.size(); ++i)
    nodes.push_back(make_node(node_data(index[i], world, specs[i]), specs[i].host + ".gpumon"));
  auto j = join_nodes(std::move(nodes));
  ASSERT_TRUE(std::holds_alternative<JobRun>(j)) << std::get<std::string>(j);
  const auto& job = std::get<JobRun>(j);
  EXPECT_EQ(job.job_id, "4711");
  EXPECT_EQ(job.world_size, 8);
  ASSERT_EQ(job.nodes.size(), 4u);
  EXPECT_EQ(job.nodes[0].name, "node-a");
  EXPECT_EQ(job.nodes[3].name, "node-d");
  EXPECT_EQ(job.reference, 0u);
  EXPECT_EQ(job.nodes[1].ranks, (std::vector<std::int64_t>{2, 3}));
  EXPECT_NEAR(job.nodes[1].clock.offset_s, 0.75, 1e-6);
  EXPECT_NEAR(job.nodes[2].clock.offset_s, -3.5, 1e-6);
  EXPECT_TRUE(job.not_judged.empty());
  // On one clock: every rank's step 100 ends at the same time.
  std::set<std::int64_t> ends;
  for (const auto& s : job.combined.steps)
    if (s.step == 100) ends.insert(std::llround(s.t_end_s * 1000));
  EXPECT_EQ(ends.size(), 1u);
  EXPECT_EQ(job.combined.ranks.size(), 8u);
  // GPU samples moved with the clock, merged into 1 s points, numbered by node.
  const GpuSeries* g = find_gpu(job.combined, 2 * kNodeGpuStride + 1);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->points.front().t_ms, kT0Ms);
  EXPECT_EQ(g->points.front().samples, 10);
}

TEST(JobRun, RecordingsOfDifferentJobsAreRefused) {
  auto specs = four_nodes();
  specs[3].job = "4712";
  auto j = job_of(specs);
  ASSERT_TRUE(std::holds_alternative<std::string>(j));
  EXPECT_NE(std::get<std::string>(j).find("different jobs"), std::string::npos);
  EXPECT_NE(std::get<std::string>(j).find("node-d.gpumon: 4712"), std::string::npos);
}

TEST(JobRun, TheSameNodeTwiceIsRefused) {
  std::vector<NodeRun> nodes;
  nodes.push_back(make_node(node_data(0, 4, spec("a")), "a.gpumon"));
  nodes.push_back(make_node(node_data(0, 4, spec("a")), "a-copy.gpumon"));
  auto j = join_nodes(std::move(nodes));
  ASSERT_TRUE(std::holds_alternative<std::string>(j));
  EXPECT_NE(std::get<std::string>(j).find("rank 0 ran in a.gpumon and in a-copy.gpumon at the "
                                          "same time"),
            std::string::npos)
      << std::get<std::string>(j);
}

TEST(JobRun, ARestartedRankIsComparedByItsLatestProcess) {
  std::vector<NodeRun> nodes;
  RunData a = node_data(0, 4, spec("a"));
  // Rank 1 crashed and torchrun restarted it: a second process, later, on the same node.
  RunData again = node_data(0, 4, spec("a"));
  for (auto& s : again.steps)
    if (s.rank == 1) {
      s.pid = 2001, s.t_start_s += 60, s.t_end_s += 60;
      a.steps.push_back(s);
    }
  for (auto& e : again.rank_events)
    if (e.rank == 1) e.pid = 2001, e.time_ms += 60000, a.rank_events.push_back(e);
  std::stable_sort(a.steps.begin(), a.steps.end(),
                   [](const auto& x, const auto& y) { return x.t_end_s < y.t_end_s; });
  finish_run_data(a);
  nodes.push_back(make_node(std::move(a), "a.gpumon"));
  nodes.push_back(make_node(node_data(1, 4, spec("b")), "b.gpumon"));
  auto j = join_nodes(std::move(nodes));
  ASSERT_TRUE(std::holds_alternative<JobRun>(j)) << std::get<std::string>(j);
  const auto& job = std::get<JobRun>(j);
  EXPECT_EQ(job.nodes[0].ranks, (std::vector<std::int64_t>{0, 1}));
  std::set<std::int64_t> pids;
  for (const auto& r : job.combined.ranks)
    if (r.rank == 1) pids.insert(r.pid & 0xffffffff);
  EXPECT_EQ(pids, (std::set<std::int64_t>{2001}));
  ASSERT_FALSE(job.not_judged.empty());
  EXPECT_EQ(job.not_judged[0].check, "rank 1 restarted");
}

TEST(JobRun, MissingRanksAndHostsThatRepeatAreSaid) {
  std::vector<NodeRun> nodes;
  nodes.push_back(make_node(node_data(0, 8, spec("box")), "/r/rank0-1.gpumon"));
  nodes.push_back(make_node(node_data(1, 8, spec("box")), "/r/rank2-3.gpumon"));
  auto j = join_nodes(std::move(nodes));
  ASSERT_TRUE(std::holds_alternative<JobRun>(j));
  const auto& job = std::get<JobRun>(j);
  EXPECT_EQ(job.nodes[0].name, "rank0-1");
  EXPECT_EQ(job.nodes[1].name, "rank2-3");
  ASSERT_EQ(job.not_judged.size(), 1u);
  EXPECT_NE(job.not_judged[0].reason.find("had 8 ranks and these recordings hold 4"),
            std::string::npos);
}

TEST(JobDiagnosis, AHealthyJobHasNoFindingAcrossNodes) {
  auto job = joined(four_nodes());
  const auto d = diagnose_job(job);
  EXPECT_TRUE(d.across.findings.empty()) << testing::warnings(d.across);
  EXPECT_EQ(d.health_score, 100);
  const auto text = render_job_text(job, d);
  EXPECT_NE(text.find("job 4711, 4 nodes, 8 ranks of 8"), std::string::npos) << text;
  EXPECT_NE(text.find("== node node-c (ranks 4-5) =="), std::string::npos) << text;
  const auto j = job_to_json(job, d);
  EXPECT_EQ(j["nodes"].size(), 4u);
  EXPECT_EQ(j["job"], "4711");
  EXPECT_EQ(j["nodes"][2]["ranks"], nlohmann::json({4, 5}));
}

TEST(JobDiagnosis, TheSlowestRankOfTheJobIsNamedWithItsNodeAndGpu) {
  auto specs = four_nodes();
  // Rank 5 (node-c, GPU 1) computes 40 % longer each step; lock step hides it in the step time.
  specs[2].step = [](training::Step& s, int local, int) {
    if (local == 1) *s.gpu_step_s *= 1.4;
  };
  specs[2].clock_offset_s = 2;
  auto job = joined(specs);
  const auto d = diagnose_job(job);
  const Finding* f = find(d, "straggler");
  ASSERT_NE(f, nullptr) << testing::warnings(d.across);
  EXPECT_EQ(f->ranks, (std::vector<std::int64_t>{5}));
  EXPECT_EQ(f->nodes, (std::vector<std::string>{"node-c"}));
  EXPECT_NE(f->summary.find("rank 5 (node node-c GPU 1) is the slowest in 100% of steps"),
            std::string::npos)
      << f->summary;
  // node-c's own straggler finding of rank 5 gives way to the job's, with its points.
  EXPECT_EQ(testing::find(job.nodes[2].diagnosis, "straggler"), nullptr);
  EXPECT_EQ(job.nodes[2].diagnosis.health_score, 100) << testing::warnings(job.nodes[2].diagnosis);
  EXPECT_TRUE(job.nodes[2].diagnosis.deductions.empty());
  EXPECT_EQ(find(d, "straggler_node"), nullptr) << "one rank is not its node";
}

TEST(JobDiagnosis, AThrottleEveryNodeShowsAlikeIsNotTheStragglersCause) {
  auto specs = four_nodes();
  for (auto& sp : specs)  // GPU 1 of every node throttles the same way
    sp.point = [](GpuPoint& p, int local, int) {
      if (local == 1) p.clock_reasons = 0x20, p.sm_clock_mhz = 1400;
    };
  specs[2].step = [](training::Step& s, int local, int) {
    if (local == 1) *s.gpu_step_s *= 1.4;
  };
  auto job = joined(specs);
  const auto d = diagnose_job(job);
  const Finding* f = find(d, "straggler");
  ASSERT_NE(f, nullptr) << testing::warnings(d.across);
  EXPECT_EQ(f->ranks, (std::vector<std::int64_t>{5}));
  EXPECT_EQ(f->summary.find("throttled"), std::string::npos) << f->summary;
  EXPECT_EQ(find(d, "node_throttled"), nullptr) << "every node throttles: no node stands out";
}

TEST(JobDiagnosis, ANodeWhoseRanksAreAllSlowIsTheStragglerNode) {
  auto specs = four_nodes();
  specs[1].step = [](training::Step& s, int, int) { *s.gpu_step_s *= 1.3; };
  auto job = joined(specs);
  const auto d = diagnose_job(job);
  const Finding* f = find(d, "straggler_node");
  ASSERT_NE(f, nullptr) << testing::warnings(d.across);
  EXPECT_EQ(f->nodes, (std::vector<std::string>{"node-b"}));
  EXPECT_EQ(f->ranks, (std::vector<std::int64_t>{2, 3}));
  EXPECT_NEAR(testing::evidence(*f, "node-b_vs_other_nodes"), 1.3, 0.01);
}

TEST(JobDiagnosis, LockStepRanksShowTheSlowNodeByHowBusyItsGpusAre) {
  auto specs = four_nodes();
  for (auto& s : specs) s.step = [](training::Step& st, int, int) { st.gpu_step_s.reset(); };
  // node-d's GPUs compute the whole step, the others finish early and wait in the collective.
  for (auto& s : specs)
    s.point = [slow = s.host == "node-d"](GpuPoint& p, int, int) {
      p.sm_active = slow ? 0.9 : 0.5;
    };
  auto job = joined(specs);
  const auto d = diagnose_job(job);
  const Finding* f = find(d, "straggler_node");
  ASSERT_NE(f, nullptr) << testing::warnings(d.across);
  EXPECT_EQ(f->nodes, (std::vector<std::string>{"node-d"}));
  EXPECT_NE(f->summary.find("GPM SM activity"), std::string::npos) << f->summary;
}

TEST(JobDiagnosis, ThrottlingOnSomeNodesIsNamed) {
  auto specs = four_nodes();
  specs[3].point = [](GpuPoint& p, int, int) {
    p.clock_reasons = 0x20;  // SW thermal slowdown
    p.sm_clock_mhz = 1400;
  };
  auto job = joined(specs);
  ASSERT_NE(testing::find(job.nodes[3].diagnosis, "throttled"), nullptr)
      << testing::warnings(job.nodes[3].diagnosis);
  const auto d = diagnose_job(job);
  const Finding* f = find(d, "node_throttled");
  ASSERT_NE(f, nullptr) << testing::warnings(d.across);
  EXPECT_EQ(f->nodes, (std::vector<std::string>{"node-d"}));
  EXPECT_NE(f->title.find("1 of 4 nodes"), std::string::npos);
}

// Every rank stops after step `last` (the steps after it are dropped); the data runs on.
void stop_after(NodeSpec& s, int last) {
  s.samples = 1000;
  s.step = [last](training::Step& st, int, int i) {
    if (i > last) st.t_end_s = std::nan("");  // node_data drops it
  };
}

TEST(JobDiagnosis, AHungJobNamesTheRankThatFellBehind) {
  auto specs = four_nodes();
  for (auto& s : specs) stop_after(s, 150);
  // Rank 6 (node-d, local 0) stopped two steps earlier.
  specs[3].step = [](training::Step& st, int local, int i) {  // stop_after's, but for rank 6
    if (i > (local == 0 ? 148 : 150)) st.t_end_s = std::nan("");
  };
  specs[3].clock_offset_s = -1.5;
  auto job = joined(specs);
  const auto d = diagnose_job(job);
  const Finding* f = find(d, "hang");
  ASSERT_NE(f, nullptr) << testing::warnings(d.across);
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_EQ(f->ranks, (std::vector<std::int64_t>{6}));
  EXPECT_EQ(f->nodes, (std::vector<std::string>{"node-d"}));
  EXPECT_NE(f->summary.find("last step was 148 while the others reached step 150"),
            std::string::npos)
      << f->summary;
  EXPECT_LE(d.health_score, d.across.health_score);
}

TEST(JobDiagnosis, AHungJobNamesTheRankWhoseGpuIdledOutsideTheCollective) {
  auto specs = four_nodes();
  for (auto& s : specs) {
    stop_after(s, 150);
    // After the hang the GPUs spin in NCCL (busy), except rank 3's (node-b, local 1).
    s.point = [b = s.host == "node-b"](GpuPoint& p, int local, int i) {
      if (i > 152) p.util_pct = b && local == 1 ? 0 : 100;
    };
  }
  auto job = joined(specs);
  const auto d = diagnose_job(job);
  const Finding* f = find(d, "hang");
  ASSERT_NE(f, nullptr) << testing::warnings(d.across);
  EXPECT_EQ(f->ranks, (std::vector<std::int64_t>{3}));
  EXPECT_NE(f->summary.find("never reached the collective"), std::string::npos) << f->summary;
}

TEST(JobDiagnosis, AHungJobNamesTheRankThatDiedFirst) {
  auto specs = four_nodes();
  for (auto& s : specs) stop_after(s, 150);
  specs[2].clock_offset_s = 4;  // node-c's clock is 4 s ahead: its events too
  std::vector<NodeRun> nodes;
  for (std::size_t k = 0; k < specs.size(); ++k) {
    RunData run = node_data(static_cast<int>(k), 8, specs[k]);
    if (k == 2) {  // rank 4 raised after its step 150, the others hung in the next collective
      const auto t = kT0Ms + 4000 + 15200;
      run.rank_events.push_back(training::rank_event(
          t, 1000, 4, "error", R"({"type":"error","exception":"RuntimeError"})"));
      run.rank_events.push_back(training::rank_event(t + 10, 1000, 4, "disconnect", "{}"));
      finish_run_data(run);
    }
    nodes.push_back(make_node(std::move(run), specs[k].host + ".gpumon"));
  }
  auto j = join_nodes(std::move(nodes));
  ASSERT_TRUE(std::holds_alternative<JobRun>(j)) << std::get<std::string>(j);
  auto& job = std::get<JobRun>(j);
  const auto d = diagnose_job(job);
  const Finding* f = find(d, "hang");
  ASSERT_NE(f, nullptr) << testing::warnings(d.across);
  EXPECT_EQ(f->ranks, (std::vector<std::int64_t>{4}));
  EXPECT_EQ(f->nodes, (std::vector<std::string>{"node-c"}));
  EXPECT_NE(f->summary.find("ended on RuntimeError after step 150"), std::string::npos)
      << f->summary;
  // The hang's time is on the reference clock, not node-c's 4 s ahead.
  ASSERT_TRUE(f->start_ms.has_value());
  EXPECT_LT(*f->start_ms, kT0Ms + 16000);
}

TEST(JobDiagnosis, TheOneRankThatDiedIsNamedEvenWhereAClockCouldNotBeSet) {
  auto specs = four_nodes();
  for (auto& s : specs) stop_after(s, 150);
  // node-b's steps do not line up with the others' (its own pace): its clock is not set.
  specs[1].step = [](training::Step& st, int, int i) {
    if (i > 150) st.t_end_s = std::nan("");
    st.t_end_s += 0.05 * i, st.t_start_s += 0.05 * i;
  };
  std::vector<NodeRun> nodes;
  for (std::size_t k = 0; k < specs.size(); ++k) {
    RunData run = node_data(static_cast<int>(k), 8, specs[k]);
    if (k == 2) {
      run.rank_events.push_back(training::rank_event(
          kT0Ms + 15200, 1001, 5, "error", R"({"type":"error","exception":"ValueError"})"));
      finish_run_data(run);
    }
    nodes.push_back(make_node(std::move(run), specs[k].host + ".gpumon"));
  }
  auto j = join_nodes(std::move(nodes));
  ASSERT_TRUE(std::holds_alternative<JobRun>(j)) << std::get<std::string>(j);
  auto& job = std::get<JobRun>(j);
  EXPECT_FALSE(job.nodes[1].clock.applied);
  const auto d = diagnose_job(job);
  const Finding* f = find(d, "hang");
  ASSERT_NE(f, nullptr) << testing::warnings(d.across);
  EXPECT_EQ(f->ranks, (std::vector<std::int64_t>{5}));
}

TEST(JobDiagnosis, AHangWhoseFirstRankCannotBeToldSaysSo) {
  auto specs = four_nodes();
  for (auto& s : specs) stop_after(s, 150);
  auto job = joined(specs);
  const auto d = diagnose_job(job);
  const Finding* f = find(d, "hang");
  ASSERT_NE(f, nullptr) << testing::warnings(d.across);
  EXPECT_TRUE(f->ranks.empty());
  EXPECT_NE(f->summary.find("cannot be told"), std::string::npos) << f->summary;
  EXPECT_LT(f->confidence, 0.9);
}

}  // namespace
}  // namespace gpumon::diagnose
