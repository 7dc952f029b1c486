// SPDX-License-Identifier: MIT
// The training families of /metrics and /api/v1/training (docs/exporter.md, "Training
// metrics"). Labels: job_id (the id every rank of a job shares, job/job_identity.h), rank,
// local_rank when known, gpu when the hello's PCI bus id matched a device; no pid (it changes with
// every restart: unbounded series) and no hostname (the scrape's instance label names the node).
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "exporter/json_values.h"
#include "exporter/renderers.h"
#include "training/job_json.h"

namespace gpumon::exporter {
namespace {

using nlohmann::json;
constexpr auto kGauge = MetricType::kGauge;
constexpr auto kCounter = MetricType::kCounter;
constexpr auto kSummary = MetricType::kSummary;

struct Series {
  const TrainingRank* rank;
  std::string job_label, rank_label, local_rank_label, gpu_label;
  std::vector<Label> labels() const {
    std::vector<Label> out;
    if (!job_label.empty()) out.push_back({"job_id", job_label});
    if (!rank_label.empty()) out.push_back({"rank", rank_label});
    if (!local_rank_label.empty()) out.push_back({"local_rank", local_rank_label});
    if (!gpu_label.empty()) out.push_back({"gpu", gpu_label});
    return out;
  }
};

std::string opt_text(const std::optional<std::int64_t>& v) {
  return v ? std::to_string(*v) : std::string();
}

// True when `a` should be shown rather than `b` (same labels): connected first, then the one
// that stepped most recently, then the newer process.
bool preferred(const TrainingRank& a, const TrainingRank& b) {
  constexpr double kNever = 1e300;
  return std::tuple(a.connected, -a.last_step_age_s.value_or(kNever), a.pid) >
         std::tuple(b.connected, -b.last_step_age_s.value_or(kNever), b.pid);
}

std::vector<Series> unique_series(const TrainingSnapshot& t) {
  std::map<std::tuple<std::string, std::string, std::string, std::string>, Series> by_labels;
  for (const TrainingRank& r : t.ranks) {
    Series s{&r, r.job.id, opt_text(r.rank), opt_text(r.local_rank),
             r.gpu ? std::to_string(*r.gpu) : std::string()};
    auto [it, added] =
        by_labels.try_emplace({s.job_label, s.rank_label, s.local_rank_label, s.gpu_label}, s);
    if (!added && preferred(r, *it->second.rank)) it->second = s;
  }
  std::vector<Series> out;
  for (auto& [key, s] : by_labels) out.push_back(std::move(s));
  return out;
}

// One family over every series that has a value.
void family(ExpositionWriter& w, const std::vector<Series>& series, std::string_view name,
            std::string_view help, MetricType type,
            const std::function<std::optional<double>(const TrainingRank&)>& value) {
  w.family(name, help, type);
  for (const Series& s : series) {
    if (const auto v = value(*s.rank)) {
      const auto labels = s.labels();
      w.sample(labels, *v);
    }
  }
}

void summary(ExpositionWriter& w, const std::vector<Series>& series, std::string_view name,
             std::string_view help, const std::function<std::uint64_t(const TrainingRank&)>& count,
             const std::function<double(const TrainingRank&)>& sum) {
  w.family(name, help, kSummary);
  for (const Series& s : series) {
    if (count(*s.rank) == 0) continue;
    const auto labels = s.labels();
    w.sample_suffixed("_sum", labels, sum(*s.rank));
    w.sample_suffixed("_count", labels, static_cast<double>(count(*s.rank)));
  }
}

// The CPU step time as a histogram (kStepSecondsBuckets), so that quantiles can be aggregated
// across ranks and nodes: histogram_quantile(0.9, sum by (le) (rate(..._bucket[5m]))).
void step_histogram(ExpositionWriter& w, const std::vector<Series>& series) {
  w.family("gpumon_training_step_seconds",
           "CPU wall time of the rank's steps, seconds (rate(_sum) / rate(_count) is the mean; "
           "histogram_quantile() over _bucket the quantiles)",
           MetricType::kHistogram);
  for (const Series& s : series) {
    const TrainingRank& r = *s.rank;
    if (r.steps == 0) continue;
    std::vector<Label> labels = s.labels();
    labels.push_back({"le", ""});
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i <= kStepSecondsBuckets.size(); ++i) {
      cumulative += r.step_seconds_buckets[i];
      std::string le;
      if (i < kStepSecondsBuckets.size())
        append_number(le, kStepSecondsBuckets[i]);
      else
        le = "+Inf";
      labels.back().value = le;
      w.sample_suffixed("_bucket", labels, static_cast<double>(cumulative));
    }
    labels.pop_back();
    w.sample_suffixed("_sum", labels, r.step_seconds_sum);
    w.sample_suffixed("_count", labels, static_cast<double>(r.steps));
  }
}

std::optional<double> as_double(const std::optional<std::int64_t>& v) {
  return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
}

// The node's /proc samples of the processes (docs/exporter.md, "Process and host memory"):
// written once a process has been sampled (a build or a command without the watcher has none).
void render_process_families(const ExporterView& v, const std::vector<Series>& s,
                             ExpositionWriter& w) {
  bool sampled = false;
  for (const Series& x : s) sampled = sampled || x.rank->cpu_seconds || x.rank->pss_bytes;
  const HostMemoryState& h = v.training.host;
  if (!sampled && !h.mem_available_bytes && !h.cgroup_usage_bytes) return;
  family(w, s, "gpumon_process_cpu_seconds_total",
         "CPU time (user + system) of the rank's process since it started, seconds", kCounter,
         [](const TrainingRank& r) { return r.cpu_seconds; });
  family(w, s, "gpumon_process_memory_pss_bytes",
         "Proportional set size of the rank's process (its RSS where smaps_rollup is "
         "unreadable)",
         kGauge, [](const TrainingRank& r) { return as_double(r.pss_bytes); });
  family(w, s, "gpumon_process_memory_rss_bytes", "Resident set size of the rank's process", kGauge,
         [](const TrainingRank& r) { return as_double(r.rss_bytes); });
  family(w, s, "gpumon_process_workers",
         "Live descendant processes of the rank (DataLoader workers)", kGauge,
         [](const TrainingRank& r) {
           return r.workers ? std::optional<double>(*r.workers) : std::nullopt;
         });
  family(w, s, "gpumon_process_workers_pss_bytes",
         "Proportional set size of the rank's descendant processes together", kGauge,
         [](const TrainingRank& r) { return as_double(r.workers_pss_bytes); });
  const auto host = [&w](std::string_view name, std::string_view help,
                         const std::optional<std::int64_t>& value) {
    w.family(name, help, kGauge);
    if (value) w.sample({}, static_cast<double>(*value));
  };
  host("gpumon_host_memory_available_bytes", "MemAvailable of /proc/meminfo",
       h.mem_available_bytes);
  host("gpumon_host_memory_total_bytes", "MemTotal of /proc/meminfo", h.mem_total_bytes);
  host("gpumon_cgroup_memory_limit_bytes",
       "Memory limit of the ranks' memory cgroup (absent when unlimited)", h.cgroup_limit_bytes);
  host("gpumon_cgroup_memory_usage_bytes", "Memory usage of the ranks' memory cgroup",
       h.cgroup_usage_bytes);
}

// What the OOM guard and the adaptive loader did (docs/exporter.md, "Training metrics"): only
// once a rank sent an action, so a run without them keeps its families as they were.
void render_action_families(const std::vector<Series>& s, ExpositionWriter& w) {
  bool acted = false;
  for (const Series& x : s) acted = acted || !x.rank->actions.empty();
  if (!acted) return;
  w.family("gpumon_training_actions_total",
           "Actions the OOM guard and the adaptive loader took, by action (at most 16 names per "
           "rank; the rest as \"other\")",
           kCounter);
  for (const Series& x : s) {
    for (const auto& [action, n] : x.rank->actions) {
      auto labels = x.labels();
      labels.push_back({"action", action});
      w.sample(labels, static_cast<double>(n));
    }
  }
  family(w, s, "gpumon_training_micro_batch_size",
         "Micro-batch size the OOM guard set last (the batch runs as several of them)", kGauge,
         [](const TrainingRank& r) { return as_double(r.micro_batch_size); });
  family(w, s, "gpumon_training_loader_workers",
         "DataLoader num_workers the adaptive loader set last", kGauge,
         [](const TrainingRank& r) { return as_double(r.loader_workers); });
}

}  // namespace

void render_training(const ExporterView& v, ExpositionWriter& w) {
  if (!v.training_enabled) return;
  std::size_t connected = 0;
  for (const TrainingRank& r : v.training.ranks) connected += r.connected ? 1 : 0;
  w.family("gpumon_training_ranks", "Training processes connected to this exporter's agent socket",
           kGauge);
  w.sample({}, static_cast<double>(connected));
  w.family("gpumon_training_ranks_untracked_total",
           "Training processes ignored because 1024 were already tracked", kCounter);
  w.sample({}, static_cast<double>(v.training.untracked));

  const std::vector<Series> s = unique_series(v.training);
  family(w, s, "gpumon_training_rank_connected",
         "1 while the rank is connected; 0 for 5 min after it said bye or disconnected, then "
         "its series vanish",
         kGauge, [](const TrainingRank& r) { return r.connected ? 1.0 : 0.0; });
  family(w, s, "gpumon_training_rank_lost",
         "1 when the rank's connection ended without a bye (it crashed, was killed or was "
         "dropped), for as long as its series stay; 0 otherwise",
         kGauge, [](const TrainingRank& r) { return r.lost ? 1.0 : 0.0; });
  family(w, s, "gpumon_training_steps_total", "Training steps the rank reported", kCounter,
         [](const TrainingRank& r) { return static_cast<double>(r.steps); });
  step_histogram(w, s);
  family(w, s, "gpumon_training_last_step_seconds", "CPU wall time of the rank's newest step",
         kGauge, [](const TrainingRank& r) { return r.last_step_seconds; });
  family(w, s, "gpumon_training_data_wait_seconds_total",
         "Time the rank's steps spent blocked waiting for the data loader, seconds", kCounter,
         [](const TrainingRank& r) { return r.data_wait_seconds_sum; });
  summary(
      w, s, "gpumon_training_gpu_step_seconds",
      "GPU time of the rank's steps (CUDA events), seconds; only steps that carried one",
      [](const TrainingRank& r) { return r.gpu_steps; },
      [](const TrainingRank& r) { return r.gpu_step_seconds_sum; });
  family(w, s, "gpumon_training_allocated_bytes",
         "PyTorch allocator: bytes allocated (newest step that carried it)", kGauge,
         [](const TrainingRank& r) { return as_double(r.allocated_bytes); });
  family(w, s, "gpumon_training_reserved_bytes",
         "PyTorch allocator: bytes reserved (newest step that carried it)", kGauge,
         [](const TrainingRank& r) { return as_double(r.reserved_bytes); });
  family(w, s, "gpumon_training_inactive_split_bytes",
         "PyTorch allocator: inactive split bytes, fragmentation (newest step that carried it)",
         kGauge, [](const TrainingRank& r) { return as_double(r.inactive_split_bytes); });
  family(w, s, "gpumon_training_alloc_retries_total",
         "PyTorch allocator: allocation retries after freeing its cache (num_alloc_retries)",
         kCounter, [](const TrainingRank& r) { return as_double(r.alloc_retries); });
  family(w, s, "gpumon_training_ooms_total", "PyTorch allocator: out-of-memory errors (num_ooms)",
         kCounter, [](const TrainingRank& r) { return as_double(r.ooms); });
  family(w, s, "gpumon_training_last_step_age_seconds",
         "Seconds since the rank's newest step arrived, as of this body's render (for hang "
         "alerts)",
         kGauge, [](const TrainingRank& r) { return r.last_step_age_s; });
  family(w, s, "gpumon_training_last_step_timestamp_seconds",
         "When the rank's newest step arrived, Unix seconds on the node's clock (time() - this "
         "is its age at query time)",
         kGauge, [](const TrainingRank& r) { return r.last_step_unix_s; });
  render_process_families(v, s, w);
  render_action_families(s, w);
}

std::string render_training_json(const ExporterView& v) {
  json ranks = json::array();
  std::size_t connected = 0;
  for (const TrainingRank& r : v.training.ranks) {
    connected += r.connected ? 1 : 0;
    json o = json::object();
    o["pid"] = r.pid;
    o["rank"] = or_null(r.rank);
    o["local_rank"] = or_null(r.local_rank);
    o["world_size"] = or_null(r.world_size);
    o["device"] = text_or_null(r.device);
    o["pci_bus_id"] = text_or_null(r.pci_bus_id);
    o["gpu"] = or_null(r.gpu);
    o["job"] = training::job_json(r.job);
    o["connected"] = r.connected;
    o["lost"] = r.lost;
    o["disconnected_for_seconds"] = or_null(r.disconnected_for_s);
    o["steps"] = r.steps;
    o["last_step"] = or_null(r.last_step);
    o["last_step_seconds"] = or_null(r.last_step_seconds);
    o["last_step_age_seconds"] = or_null(r.last_step_age_s);
    o["last_step_timestamp_seconds"] = or_null(r.last_step_unix_s);
    o["step_seconds_sum"] = r.step_seconds_sum;
    o["data_wait_seconds_sum"] = or_null(r.data_wait_seconds_sum);
    o["gpu_steps"] = r.gpu_steps;
    o["gpu_step_seconds_sum"] = r.gpu_step_seconds_sum;
    o["last_gpu_step_seconds"] = or_null(r.last_gpu_step_seconds);
    o["steps_per_second"] = or_null(r.steps_per_second);
    o["data_wait_share"] = or_null(r.data_wait_share);
    o["allocated_bytes"] = or_null(r.allocated_bytes);
    o["reserved_bytes"] = or_null(r.reserved_bytes);
    o["inactive_split_bytes"] = or_null(r.inactive_split_bytes);
    o["alloc_retries"] = or_null(r.alloc_retries);
    o["ooms"] = or_null(r.ooms);
    o["cpu_seconds"] = or_null(r.cpu_seconds);
    o["pss_bytes"] = or_null(r.pss_bytes);
    o["rss_bytes"] = or_null(r.rss_bytes);
    o["pss_is_rss"] = r.pss_is_rss;
    o["workers"] = or_null(r.workers);
    o["workers_pss_bytes"] = or_null(r.workers_pss_bytes);
    o["actions"] = r.actions;
    o["micro_batch_size"] = or_null(r.micro_batch_size);
    o["loader_workers"] = or_null(r.loader_workers);
    ranks.push_back(std::move(o));
  }
  json out = json::object();
  out["enabled"] = v.training_enabled;
  out["connected"] = connected;
  out["untracked"] = v.training.untracked;
  out["rate_window_steps"] = TrainingState::kRateWindow;
  out["stale_after_seconds"] =
      std::chrono::duration_cast<std::chrono::seconds>(TrainingState::kStaleAfter).count();
  out["ranks"] = std::move(ranks);
  const HostMemoryState& h = v.training.host;
  if (h.mem_available_bytes || h.mem_total_bytes || h.cgroup_usage_bytes) {  // once sampled
    json host = json::object();
    host["mem_available_bytes"] = or_null(h.mem_available_bytes);
    host["mem_total_bytes"] = or_null(h.mem_total_bytes);
    host["cgroup_limit_bytes"] = or_null(h.cgroup_limit_bytes);
    host["cgroup_usage_bytes"] = or_null(h.cgroup_usage_bytes);
    out["host"] = std::move(host);
  }
  return dump_json(out);
}

}  // namespace gpumon::exporter
