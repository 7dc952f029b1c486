// SPDX-License-Identifier: MIT
// The training families and /api/v1/training over plain data: exact text, label rules
// (rank / local_rank / gpu only when known, one series per label set), promtool clean.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "exporter/renderers.h"
#include "exporter/testing/exposition_check.h"

namespace gpumon::exporter {
namespace {

TrainingRank rank0() {
  TrainingRank r;
  r.pid = 100;
  r.rank = 0;
  r.local_rank = 0;
  r.gpu = 2;
  r.steps = 4;
  r.last_step = 3;
  r.step_seconds_sum = 2;
  r.last_step_seconds = 0.5;
  r.data_wait_seconds_sum = 0.25;
  r.gpu_steps = 3;
  r.gpu_step_seconds_sum = 1.5;
  r.allocated_bytes = 1024;
  r.reserved_bytes = 2048;
  r.inactive_split_bytes = 512;
  r.alloc_retries = 1;
  r.ooms = 0;
  r.last_step_age_s = 0.75;
  r.last_step_unix_s = 1764739423.25;
  // Steps of 0.25, 0.5, 0.5 and 0.75 s: a step on a bound counts in it (le).
  r.step_seconds_buckets[5] = 1;
  r.step_seconds_buckets[6] = 2;
  r.step_seconds_buckets[7] = 1;
  return r;
}

ExporterView view_with(std::vector<TrainingRank> ranks) {
  ExporterView v;
  v.training_enabled = true;
  v.training.ranks = std::move(ranks);
  return v;
}

std::string render(const ExporterView& v) {
  std::string out;
  ExpositionWriter w(out);
  render_training(v, w);
  return out;
}

TEST(ExporterStateTrainingRender, ExactText) {
  TrainingRank bare;  // no rank, no GPU time, no allocator figures, no step yet
  bare.pid = 7;
  bare.connected = false;
  bare.lost = true;  // left without a bye
  const std::string expected =
      "# HELP gpumon_training_ranks Training processes connected to this exporter's agent "
      "socket\n"
      "# TYPE gpumon_training_ranks gauge\n"
      "gpumon_training_ranks 1\n"
      "# HELP gpumon_training_ranks_untracked_total Training processes ignored because 1024 "
      "were already tracked\n"
      "# TYPE gpumon_training_ranks_untracked_total counter\n"
      "gpumon_training_ranks_untracked_total 0\n"
      "# HELP gpumon_training_rank_connected 1 while the rank is connected; 0 for 5 min after "
      "it said bye or disconnected, then its series vanish\n"
      "# TYPE gpumon_training_rank_connected gauge\n"
      "gpumon_training_rank_connected 0\n"
      "gpumon_training_rank_connected{rank=\"0\",local_rank=\"0\",gpu=\"2\"} 1\n"
      "# HELP gpumon_training_rank_lost 1 when the rank's connection ended without a bye (it "
      "crashed, was killed or was dropped), for as long as its series stay; 0 otherwise\n"
      "# TYPE gpumon_training_rank_lost gauge\n"
      "gpumon_training_rank_lost 1\n"
      "gpumon_training_rank_lost{rank=\"0\",local_rank=\"0\",gpu=\"2\"} 0\n"
      "# HELP gpumon_training_steps_total Training steps the rank reported\n"
      "# TYPE gpumon_training_steps_total counter\n"
      "gpumon_training_steps_total 0\n"
      "gpumon_training_steps_total{rank=\"0\",local_rank=\"0\",gpu=\"2\"} 4\n"
      "# HELP gpumon_training_step_seconds CPU wall time of the rank's steps, seconds "
      "(rate(_sum) / rate(_count) is the mean; histogram_quantile() over _bucket the "
      "quantiles)\n"
      "# TYPE gpumon_training_step_seconds histogram\n"
      "gpumon_training_step_seconds_bucket{rank=\"0\",local_rank=\"0\",gpu=\"2\",le=\"0.005\"} 0\n"
      "gpumon_training_step_seconds_bucket{rank=\"0\",local_rank=\"0\",gpu=\"2\",le=\"0.01\"} 0\n"
      "gpumon_training_step_seconds_bucket{rank=\"0\",local_rank=\"0\",gpu=\"2\",le=\"0.025\"} 0\n"
      "gpumon_training_step_seconds_bucket{rank=\"0\",local_rank=\"0\",gpu=\"2\",le=\"0.05\"} 0\n"
      "gpumon_training_step_seconds_bucket{rank=\"0\",local_rank=\"0\",gpu=\"2\",le=\"0.1\"} 0\n"
      "gpumon_training_step_seconds_bucket{rank=\"0\",local_rank=\"0\",gpu=\"2\",le=\"0.25\"} 1\n"
      "gpumon_training_step_seconds_bucket{rank=\"0\",local_rank=\"0\",gpu=\"2\",le=\"0.5\"} 3\n"
      "gpumon_training_step_seconds_bucket{rank=\"0\",local_rank=\"0\",gpu=\"2\",le=\"1\"} 4\n"
      "gpumon_training_step_seconds_bucket{rank=\"0\",local_rank=\"0\",gpu=\"2\",le=\"2.5\"} 4\n"
      "gpumon_training_step_seconds_bucket{rank=\"0\",local_rank=\"0\",gpu=\"2\",le=\"5\"} 4\n"
      "gpumon_training_step_seconds_bucket{rank=\"0\",local_rank=\"0\",gpu=\"2\",le=\"10\"} 4\n"
      "gpumon_training_step_seconds_bucket{rank=\"0\",local_rank=\"0\",gpu=\"2\",le=\"30\"} 4\n"
      "gpumon_training_step_seconds_bucket{rank=\"0\",local_rank=\"0\",gpu=\"2\",le=\"60\"} 4\n"
      "gpumon_training_step_seconds_bucket{rank=\"0\",local_rank=\"0\",gpu=\"2\",le=\"120\"} 4\n"
      "gpumon_training_step_seconds_bucket{rank=\"0\",local_rank=\"0\",gpu=\"2\",le=\"+Inf\"} 4\n"
      "gpumon_training_step_seconds_sum{rank=\"0\",local_rank=\"0\",gpu=\"2\"} 2\n"
      "gpumon_training_step_seconds_count{rank=\"0\",local_rank=\"0\",gpu=\"2\"} 4\n"
      "# HELP gpumon_training_last_step_seconds CPU wall time of the rank's newest step\n"
      "# TYPE gpumon_training_last_step_seconds gauge\n"
      "gpumon_training_last_step_seconds{rank=\"0\",local_rank=\"0\",gpu=\"2\"} 0.5\n"
      "# HELP gpumon_training_data_wait_seconds_total Time the rank's steps spent blocked "
      "waiting for the data loader, seconds\n"
      "# TYPE gpumon_training_data_wait_seconds_total counter\n"
      "gpumon_training_data_wait_seconds_total{rank=\"0\",local_rank=\"0\",gpu=\"2\"} 0.25\n"
      "# HELP gpumon_training_gpu_step_seconds GPU time of the rank's steps (CUDA events), "
      "seconds; only steps that carried one\n"
      "# TYPE gpumon_training_gpu_step_seconds summary\n"
      "gpumon_training_gpu_step_seconds_sum{rank=\"0\",local_rank=\"0\",gpu=\"2\"} 1.5\n"
      "gpumon_training_gpu_step_seconds_count{rank=\"0\",local_rank=\"0\",gpu=\"2\"} 3\n"
      "# HELP gpumon_training_allocated_bytes PyTorch allocator: bytes allocated (newest step "
      "that carried it)\n"
      "# TYPE gpumon_training_allocated_bytes gauge\n"
      "gpumon_training_allocated_bytes{rank=\"0\",local_rank=\"0\",gpu=\"2\"} 1024\n"
      "# HELP gpumon_training_reserved_bytes PyTorch allocator: bytes reserved (newest step "
      "that carried it)\n"
      "# TYPE gpumon_training_reserved_bytes gauge\n"
      "gpumon_training_reserved_bytes{rank=\"0\",local_rank=\"0\",gpu=\"2\"} 2048\n"
      "# HELP gpumon_training_inactive_split_bytes PyTorch allocator: inactive split bytes, "
      "fragmentation (newest step that carried it)\n"
      "# TYPE gpumon_training_inactive_split_bytes gauge\n"
      "gpumon_training_inactive_split_bytes{rank=\"0\",local_rank=\"0\",gpu=\"2\"} 512\n"
      "# HELP gpumon_training_alloc_retries_total PyTorch allocator: allocation retries after "
      "freeing its cache (num_alloc_retries)\n"
      "# TYPE gpumon_training_alloc_retries_total counter\n"
      "gpumon_training_alloc_retries_total{rank=\"0\",local_rank=\"0\",gpu=\"2\"} 1\n"
      "# HELP gpumon_training_ooms_total PyTorch allocator: out-of-memory errors (num_ooms)\n"
      "# TYPE gpumon_training_ooms_total counter\n"
      "gpumon_training_ooms_total{rank=\"0\",local_rank=\"0\",gpu=\"2\"} 0\n"
      "# HELP gpumon_training_last_step_age_seconds Seconds since the rank's newest step "
      "arrived, as of this body's render (for hang alerts)\n"
      "# TYPE gpumon_training_last_step_age_seconds gauge\n"
      "gpumon_training_last_step_age_seconds{rank=\"0\",local_rank=\"0\",gpu=\"2\"} 0.75\n"
      "# HELP gpumon_training_last_step_timestamp_seconds When the rank's newest step arrived, "
      "Unix seconds on the node's clock (time() - this is its age at query time)\n"
      "# TYPE gpumon_training_last_step_timestamp_seconds gauge\n"
      "gpumon_training_last_step_timestamp_seconds{rank=\"0\",local_rank=\"0\",gpu=\"2\"} "
      "1764739423.25\n";
  EXPECT_EQ(render(view_with({bare, rank0()})), expected);
}

TEST(ExporterStateTrainingRender, NothingWhenDisabled) {
  EXPECT_EQ(render(ExporterView{}), "");
}

TEST(ExporterStateTrainingRender, SameLabelsWrittenOnceConnectedFirst) {
  TrainingRank gone = rank0();
  gone.pid = 50;
  gone.connected = false;
  gone.steps = 900;
  TrainingRank restarted = rank0();
  restarted.pid = 60;
  restarted.steps = 1;
  const std::string body = render(view_with({gone, restarted}));
  EXPECT_NE(body.find("gpumon_training_steps_total{rank=\"0\",local_rank=\"0\",gpu=\"2\"} 1\n"),
            std::string::npos);
  EXPECT_EQ(body.find("} 900\n"), std::string::npos);
}

TEST(ExporterStateTrainingRender, JobIdLabelSeparatesTwoJobsOnOneNode) {
  TrainingRank a = rank0();
  a.job.id = "4711";
  a.job.id_source = "slurm";
  TrainingRank b = rank0();  // rank 0 of another job, on another GPU of the node
  b.pid = 200;
  b.gpu = 3;
  b.job.id = "node001:29500";
  b.steps = 9;
  const std::string body = render(view_with({a, b}));
  EXPECT_NE(body.find("gpumon_training_steps_total{job_id=\"4711\",rank=\"0\",local_rank=\"0\","
                      "gpu=\"2\"} 4\n"),
            std::string::npos)
      << body;
  EXPECT_NE(body.find("gpumon_training_steps_total{job_id=\"node001:29500\",rank=\"0\","
                      "local_rank=\"0\",gpu=\"3\"} 9\n"),
            std::string::npos);
  const auto j = nlohmann::json::parse(render_training_json(view_with({a, b})));
  EXPECT_EQ(j["ranks"][0]["job"], nlohmann::json::parse(R"({"id":"4711","id_source":"slurm"})"));
}

TEST(ExporterStateTrainingRender, PromtoolFindsNothing) {
  if (!testing::have_promtool()) GTEST_SKIP() << "promtool not installed";
  TrainingRank r1 = rank0();
  r1.pid = 101;
  r1.rank = 1;
  r1.local_rank = 1;
  r1.gpu.reset();
  const auto result = testing::promtool_check(render(view_with({rank0(), r1})));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output, "");
}

TEST(ExporterStateTrainingRender, ActionsOnceARankActed) {
  EXPECT_EQ(render(view_with({rank0()})).find("actions_total"), std::string::npos)
      << "no action families before an action";
  TrainingRank r = rank0();
  r.actions = {{"oom_split", 2}, {"loader_retuned", 1}};
  r.micro_batch_size = 16;
  r.loader_workers = 4;
  TrainingRank quiet = rank0();  // another rank that sent none: no series of its own
  quiet.pid = 101, quiet.rank = 1, quiet.local_rank = 1, quiet.gpu = 3;
  const std::string body = render(view_with({r, quiet}));
  const std::string expected =
      "# HELP gpumon_training_actions_total Actions the OOM guard and the adaptive loader took, "
      "by action (at most 16 names per rank; the rest as \"other\")\n"
      "# TYPE gpumon_training_actions_total counter\n"
      "gpumon_training_actions_total{rank=\"0\",local_rank=\"0\",gpu=\"2\",action=\"loader_"
      "retuned\"} 1\n"
      "gpumon_training_actions_total{rank=\"0\",local_rank=\"0\",gpu=\"2\",action=\"oom_split\"} "
      "2\n"
      "# HELP gpumon_training_micro_batch_size Micro-batch size the OOM guard set last (the "
      "batch runs as several of them)\n"
      "# TYPE gpumon_training_micro_batch_size gauge\n"
      "gpumon_training_micro_batch_size{rank=\"0\",local_rank=\"0\",gpu=\"2\"} 16\n"
      "# HELP gpumon_training_loader_workers DataLoader num_workers the adaptive loader set last\n"
      "# TYPE gpumon_training_loader_workers gauge\n"
      "gpumon_training_loader_workers{rank=\"0\",local_rank=\"0\",gpu=\"2\"} 4\n";
  const auto at = body.find("# HELP gpumon_training_actions_total");
  ASSERT_NE(at, std::string::npos) << body;
  EXPECT_EQ(body.substr(at), expected);
  if (testing::have_promtool()) {
    const auto result = testing::promtool_check(body);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    EXPECT_EQ(result.output, "");
  }
}

TEST(ExporterStateTrainingRender, Json) {
  TrainingRank r = rank0();
  r.steps_per_second = 2;
  r.data_wait_share = 0.125;
  r.pci_bus_id = "0000:18:00.0";
  ExporterView v = view_with({r});
  const auto j = nlohmann::json::parse(render_training_json(v));
  EXPECT_EQ(j["enabled"], true);
  EXPECT_EQ(j["connected"], 1);
  EXPECT_EQ(j["stale_after_seconds"], 300);
  ASSERT_EQ(j["ranks"].size(), 1U);
  const auto& o = j["ranks"][0];
  EXPECT_EQ(o["rank"], 0);
  EXPECT_EQ(o["gpu"], 2);
  EXPECT_EQ(o["pci_bus_id"], "0000:18:00.0");
  EXPECT_EQ(o["steps"], 4);
  EXPECT_EQ(o["last_step"], 3);
  EXPECT_EQ(o["steps_per_second"], 2.0);
  EXPECT_EQ(o["data_wait_share"], 0.125);
  EXPECT_EQ(o["world_size"], nullptr);  // unknown is null, never 0
  EXPECT_EQ(o["job"], nullptr);
  EXPECT_EQ(o["reserved_bytes"], 2048);
  EXPECT_EQ(nlohmann::json::parse(render_training_json(ExporterView{}))["enabled"], false);
  EXPECT_FALSE(nlohmann::json::parse(render_training_json(v)).contains("host"))
      << "no host object before a process sample";
}

TEST(ExporterStateTrainingRender, ProcessAndHostMemoryOnceSampled) {
  TrainingRank r = rank0();
  EXPECT_EQ(render(view_with({r})).find("gpumon_process_"), std::string::npos)
      << "no family before a sample";
  r.cpu_seconds = 12.5;
  r.pss_bytes = 3000, r.rss_bytes = 4000;
  r.workers = 2, r.workers_pss_bytes = 1000;
  ExporterView v = view_with({r});
  v.training.host.mem_available_bytes = 8192;
  v.training.host.mem_total_bytes = 16384;
  const std::string body = render(v);
  const std::string labels = "{rank=\"0\",local_rank=\"0\",gpu=\"2\"}";
  EXPECT_NE(body.find("# TYPE gpumon_process_cpu_seconds_total counter\n"
                      "gpumon_process_cpu_seconds_total" +
                      labels + " 12.5\n"),
            std::string::npos)
      << body;
  EXPECT_NE(body.find("gpumon_process_memory_pss_bytes" + labels + " 3000\n"), std::string::npos);
  EXPECT_NE(body.find("gpumon_process_workers" + labels + " 2\n"), std::string::npos);
  EXPECT_NE(body.find("gpumon_process_workers_pss_bytes" + labels + " 1000\n"), std::string::npos);
  EXPECT_NE(body.find("gpumon_host_memory_available_bytes 8192\n"), std::string::npos);
  // No cgroup limit (unlimited): no sample, never a 0.
  EXPECT_EQ(body.find("\ngpumon_cgroup_memory_limit_bytes "), std::string::npos);
  const auto j = nlohmann::json::parse(render_training_json(v));
  EXPECT_EQ(j["ranks"][0]["pss_bytes"], 3000);
  EXPECT_EQ(j["host"]["mem_available_bytes"], 8192);
  EXPECT_EQ(j["host"]["cgroup_limit_bytes"], nullptr);
}

}  // namespace
}  // namespace gpumon::exporter
