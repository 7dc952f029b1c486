// SPDX-License-Identifier: MIT
#include "training/rank_memory.h"

#include <nlohmann/json.hpp>

#include "training/protocol.h"

namespace gpumon::training {
namespace {

using nlohmann::json;

template <typename T>
std::optional<T> get(const json& o, const char* key) {
  const auto it = o.find(key);
  if (it == o.end() || it->is_null()) return std::nullopt;
  if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string()) return std::nullopt;
  } else if constexpr (std::is_floating_point_v<T>) {
    // Seconds of one step: a negative, huge or non-finite value is a corrupt file.
    if (!it->is_number() || !(it->get<T>() >= 0 && it->get<T>() < 1e7)) return std::nullopt;
  } else {
    if (!it->is_number_integer()) return std::nullopt;
  }
  return it->get<T>();
}

}  // namespace

std::string rank_memory_json(const RankMemoryTable& table) {
  json ranks = json::array();
  for (const auto& r : table.ranks) {
    json o = {{"pid", r.pid}, {"step", r.step}, {"time_ms", r.time_ms}};
    o["rank"] = r.rank ? json(*r.rank) : json();
    o["device"] = r.device ? json(*r.device) : json();
    o["gpu"] = r.gpu ? json(*r.gpu) : json();
    o["allocated_bytes"] = r.allocated_bytes ? json(*r.allocated_bytes) : json();
    o["reserved_bytes"] = r.reserved_bytes ? json(*r.reserved_bytes) : json();
    o["step_s"] = r.step_s ? json(*r.step_s) : json();
    o["data_wait_s"] = r.data_wait_s ? json(*r.data_wait_s) : json();
    if (r.hello)
      if (json hello = json::parse(r.hello->json, nullptr, /*allow_exceptions=*/false);
          hello.is_object())
        o["hello"] = std::move(hello);
    ranks.push_back(std::move(o));
  }
  json gpus = json::array();
  for (const auto& g : table.gpus)
    gpus.push_back({{"index", g.index},
                    {"util_pct", g.util_pct ? json(*g.util_pct) : json()},
                    {"temperature_c", g.temperature_c ? json(*g.temperature_c) : json()}});
  const json doc = {{"version", 1},
                    {"written_ms", table.written_ms},
                    {"ranks", std::move(ranks)},
                    {"gpus", std::move(gpus)}};
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<RankMemoryTable> parse_rank_memory(std::string_view text, std::string& error) {
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("ranks") || !doc["ranks"].is_array()) {
    error = "not a table of ranks (a JSON object with a \"ranks\" list)";
    return std::nullopt;
  }
  if (get<std::int64_t>(doc, "version") != 1) {
    error = "a version this gpumon does not read";
    return std::nullopt;
  }
  RankMemoryTable table;
  table.written_ms = get<std::int64_t>(doc, "written_ms").value_or(0);
  for (const json& o : doc["ranks"]) {
    if (!o.is_object()) continue;
    const auto pid = get<std::int64_t>(o, "pid");
    if (!pid || *pid <= 0) continue;
    RankMemory r;
    r.pid = *pid;
    r.rank = get<std::int64_t>(o, "rank");
    r.device = get<std::string>(o, "device");
    if (const auto gpu = get<std::int64_t>(o, "gpu"); gpu && *gpu >= 0 && *gpu < 4096)
      r.gpu = static_cast<unsigned>(*gpu);
    r.step = get<std::int64_t>(o, "step").value_or(0);
    r.time_ms = get<std::int64_t>(o, "time_ms").value_or(0);
    r.allocated_bytes = get<std::int64_t>(o, "allocated_bytes");
    r.reserved_bytes = get<std::int64_t>(o, "reserved_bytes");
    r.step_s = get<double>(o, "step_s");
    r.data_wait_s = get<double>(o, "data_wait_s");
    // The hello with the wire's rules (protocol.h): nothing is guessed from a bad one.
    if (const auto it = o.find("hello"); it != o.end() && it->is_object())
      r.hello = rank_event(0, r.pid, r.rank, "hello", it->dump()).hello;
    table.ranks.push_back(std::move(r));
  }
  const auto percent = [](const json& o, const char* key) -> std::optional<unsigned> {
    const auto v = get<std::int64_t>(o, key);
    if (!v || *v < 0 || *v > 1000) return std::nullopt;
    return static_cast<unsigned>(*v);
  };
  if (const auto it = doc.find("gpus"); it != doc.end() && it->is_array())
    for (const json& o : *it) {
      if (!o.is_object()) continue;
      const auto index = get<std::int64_t>(o, "index");
      if (!index || *index < 0 || *index >= 4096) continue;
      table.gpus.push_back(
          {static_cast<unsigned>(*index), percent(o, "util_pct"), percent(o, "temperature_c")});
    }
  return table;
}

}  // namespace gpumon::training
