// SPDX-License-Identifier: MIT
#include "diagnose/run_data.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

namespace gpumon::diagnose {
namespace {

// "00000000:3B:00.0" and "0000:3b:00.0" name the same bus id: compare without the domain's
// leading zeros and case.
std::string normal_bus_id(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto colon = s.find(':');
  if (colon == std::string::npos) return s;
  std::string domain = s.substr(0, colon);
  domain.erase(0, std::min(domain.find_first_not_of('0'), domain.size()));
  return domain + s.substr(colon);
}

std::optional<std::string> json_string(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

void read_hello(const std::string& detail, RankInfo& r) {
  const auto j = nlohmann::json::parse(detail, nullptr, false);
  if (!j.is_object()) return;
  if (auto v = json_string(j, "device")) r.device = v;
  if (auto v = json_string(j, "pci_bus_id")) r.pci_bus_id = v;
  if (auto v = json_string(j, "cuda_visible_devices")) r.cuda_visible_devices = v;
  if (const auto it = j.find("world_size"); it != j.end() && it->is_number_integer())
    r.world_size = it->get<std::int64_t>();
}

// The N of "cuda:N"; "cuda" alone is device 0.
std::optional<std::size_t> cuda_ordinal(const std::optional<std::string>& device) {
  if (!device || !device->starts_with("cuda")) return std::nullopt;
  if (*device == "cuda") return 0;
  if ((*device)[4] != ':') return std::nullopt;
  std::size_t n = 0;
  const std::string digits = device->substr(5);
  if (digits.empty() || digits.size() > 4) return std::nullopt;
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    n = n * 10 + static_cast<std::size_t>(c - '0');
  }
  return n;
}

void map_rank(const RunData& run, RankInfo& r) {
  if (r.pci_bus_id) {
    for (const auto& g : run.gpus)
      if (g.pci_bus_id && normal_bus_id(*g.pci_bus_id) == normal_bus_id(*r.pci_bus_id)) {
        r.gpu = g.gpu, r.gpu_mapped_by = "pci_bus_id";
        return;
      }
  }
  // CUDA_VISIBLE_DEVICES by UUID only: integer entries are in CUDA's order, which need not be
  // NVML's.
  if (r.cuda_visible_devices) {
    if (const auto n = cuda_ordinal(r.device)) {
      std::vector<std::string> entries;
      std::string cur;
      for (char c : *r.cuda_visible_devices + ",") {
        if (c == ',')
          entries.push_back(cur), cur.clear();
        else if (c != ' ')
          cur += c;
      }
      if (*n < entries.size() && entries[*n].starts_with("GPU-")) {
        for (const auto& g : run.gpus)
          if (g.uuid && *g.uuid == entries[*n]) {
            r.gpu = g.gpu, r.gpu_mapped_by = "cuda_visible_devices";
            return;
          }
      }
    }
  }
  // NVML saw this pid on a GPU: the one where it held the most memory.
  std::optional<unsigned> best;
  double best_mem = -1;
  for (const auto& p : run.processes) {
    if (static_cast<std::int64_t>(p.pid) != r.pid) continue;
    const double mem = p.max_used_memory_bytes ? static_cast<double>(*p.max_used_memory_bytes) : 0;
    if (mem > best_mem) best = p.gpu, best_mem = mem;
  }
  if (best) {
    r.gpu = best, r.gpu_mapped_by = "nvml_processes";
    return;
  }
  if (run.gpus.size() == 1 && (!r.device || r.device->starts_with("cuda"))) {
    r.gpu = run.gpus.front().gpu, r.gpu_mapped_by = "single_gpu";
  }
}

void widen(std::optional<std::int64_t>& lo, std::optional<std::int64_t>& hi, std::int64_t t) {
  lo = std::min(lo.value_or(t), t);
  hi = std::max(hi.value_or(t), t);
}

}  // namespace

void finish_run_data(RunData& run) {
  std::sort(run.gpus.begin(), run.gpus.end(),
            [](const GpuSeries& a, const GpuSeries& b) { return a.gpu < b.gpu; });
  std::map<std::int64_t, RankInfo> by_pid;
  for (const auto& s : run.steps) {
    auto& r = by_pid[s.pid];
    r.pid = s.pid;
    if (s.rank) r.rank = s.rank;
    if (s.world_size) r.world_size = s.world_size;
    if (s.device) r.device = s.device;
  }
  for (const auto& e : run.rank_events) {
    auto& r = by_pid[e.pid];
    r.pid = e.pid;
    if (e.rank) r.rank = e.rank;
    if (e.kind == "hello") {
      r.hello_ms = e.time_ms;
      r.bye_ms.reset(), r.disconnect_ms.reset();  // a reconnection starts again
      read_hello(e.detail, r);
    } else if (e.kind == "bye") {
      r.bye_ms = e.time_ms;
    } else if (e.kind == "disconnect" || e.kind == "dropped") {
      r.disconnect_ms = e.time_ms;
    }
  }
  run.ranks.clear();
  for (auto& [pid, r] : by_pid) {
    map_rank(run, r);
    run.ranks.push_back(r);
  }
  std::optional<std::int64_t> lo, hi;
  for (const auto& g : run.gpus)
    if (!g.points.empty()) {
      widen(lo, hi, g.points.front().t_ms);
      widen(lo, hi, g.points.back().t_ms + g.points.back().span_ms);
    }
  for (const auto& s : run.steps)
    if (std::isfinite(s.t_start_s) && std::isfinite(s.t_end_s)) {
      widen(lo, hi, std::llround(s.t_start_s * 1000));
      widen(lo, hi, std::llround(s.t_end_s * 1000));
    }
  for (const auto& e : run.events) widen(lo, hi, e.time_ms);
  for (const auto& e : run.rank_events) widen(lo, hi, e.time_ms);
  if (!run.start_ms) run.start_ms = lo;
  if (!run.end_ms) run.end_ms = hi;
}

const GpuSeries* find_gpu(const RunData& run, unsigned gpu) {
  for (const auto& g : run.gpus)
    if (g.gpu == gpu) return &g;
  return nullptr;
}

}  // namespace gpumon::diagnose
