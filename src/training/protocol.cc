// SPDX-License-Identifier: MIT
#include "training/protocol.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "training/job_json.h"

namespace gpumon::training {
namespace {

using nlohmann::json;

struct BadField {
  std::string message;
};

// A missing key and JSON null are both "absent".
const json* field(const json& o, const char* key) {
  auto it = o.find(key);
  return it == o.end() || it->is_null() ? nullptr : &*it;
}

std::optional<std::int64_t> opt_int(const json& o, const char* key) {
  const json* v = field(o, key);
  if (!v) return std::nullopt;
  if (v->is_number_integer()) return v->get<std::int64_t>();
  if (v->is_number_float()) {  // 3.0 is accepted as 3; 3.5 is not an integer
    const double d = v->get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e18)
      return static_cast<std::int64_t>(d);
  }
  throw BadField{std::string("\"") + key + "\" must be an integer"};
}

std::int64_t req_int(const json& o, const char* key) {
  auto v = opt_int(o, key);
  if (!v) throw BadField{std::string("\"") + key + "\" is required"};
  return *v;
}

std::optional<double> opt_seconds(const json& o, const char* key) {
  const json* v = field(o, key);
  if (!v) return std::nullopt;
  if (!v->is_number()) throw BadField{std::string("\"") + key + "\" must be a number"};
  const double d = v->get<double>();
  if (!std::isfinite(d) || d < 0)
    throw BadField{std::string("\"") + key + "\" must be a finite number >= 0"};
  return d;
}

double req_seconds(const json& o, const char* key) {
  auto v = opt_seconds(o, key);
  if (!v) throw BadField{std::string("\"") + key + "\" is required"};
  return *v;
}

std::optional<std::string> opt_text(const json& o, const char* key) {
  const json* v = field(o, key);
  if (!v) return std::nullopt;
  if (!v->is_string()) throw BadField{std::string("\"") + key + "\" must be a string"};
  return v->get<std::string>();
}

Message parse_step(const json& o) {
  Step r;
  r.step = req_int(o, "step");
  if (r.step < 0) throw BadField{"\"step\" must be >= 0"};
  r.t_start_s = req_seconds(o, "t_start");
  r.t_end_s = req_seconds(o, "t_end");
  if (r.t_end_s < r.t_start_s) throw BadField{"\"t_end\" is before \"t_start\""};
  r.cpu_step_s = req_seconds(o, "cpu_step_s");
  r.gpu_step_s = opt_seconds(o, "gpu_step_s");
  r.data_wait_s = opt_seconds(o, "data_wait_s");
  if (const json* mem = field(o, "mem")) {
    if (!mem->is_object()) throw BadField{"\"mem\" must be an object or null"};
    r.allocated_bytes = opt_int(*mem, "allocated");
    r.reserved_bytes = opt_int(*mem, "reserved");
    r.active_bytes = opt_int(*mem, "active");
    r.inactive_split_bytes = opt_int(*mem, "inactive_split");
    r.allocated_peak_bytes = opt_int(*mem, "allocated_peak");
    r.reserved_peak_bytes = opt_int(*mem, "reserved_peak");
    r.num_alloc_retries = opt_int(*mem, "num_alloc_retries");
    r.num_ooms = opt_int(*mem, "num_ooms");
  }
  return r;
}

Message parse_hello(const json& o) {
  Hello h;
  h.pid = req_int(o, "pid");
  if (h.pid <= 0) throw BadField{"\"pid\" must be > 0"};
  h.rank = opt_int(o, "rank");
  h.local_rank = opt_int(o, "local_rank");
  h.world_size = opt_int(o, "world_size");
  h.hostname = opt_text(o, "hostname");
  h.torch_version = opt_text(o, "torch_version");
  h.device = opt_text(o, "device");
  h.pci_bus_id = opt_text(o, "pci_bus_id");
  h.device_uuid = opt_text(o, "device_uuid");
  h.cuda_visible_devices = opt_text(o, "cuda_visible_devices");
  h.cuda_device_order = opt_text(o, "cuda_device_order");
  if (const auto it = o.find("job"); it != o.end()) h.job = job_from_json(*it);
  h.json = o.dump(-1, ' ', false, json::error_handler_t::replace);
  return h;
}

Message parse_oom(const json& o) {
  Oom m;
  m.step = opt_int(o, "step");
  m.requested_bytes = opt_int(o, "requested_bytes");
  m.json = o.dump(-1, ' ', false, json::error_handler_t::replace);
  return m;
}

Message parse_error(const json& o) {
  Error m;
  const auto exception = opt_text(o, "exception");
  if (!exception || exception->empty()) throw BadField{"\"exception\" is required"};
  (void)opt_text(o, "message"), (void)opt_text(o, "where"), (void)opt_int(o, "step");  // types
  m.exception = *exception;
  m.json = o.dump(-1, ' ', false, json::error_handler_t::replace);
  return m;
}

Message parse_device(const json& o) {
  DeviceUpdate d;
  d.torch_version = opt_text(o, "torch_version");
  d.device = opt_text(o, "device");
  d.pci_bus_id = opt_text(o, "pci_bus_id");
  d.device_uuid = opt_text(o, "device_uuid");
  if (!d.device) throw BadField{"\"device\" is required"};
  return d;
}

Message parse_action(const json& o) {
  Action a;
  const auto name = opt_text(o, "action");
  if (!name || name->empty()) throw BadField{"\"action\" is required"};
  if (name->size() > kMaxActionName ||
      name->find_first_not_of("abcdefghijklmnopqrstuvwxyz_") != std::string::npos)
    throw BadField{"\"action\" must be at most 64 characters of a-z and _"};
  a.action = *name;
  a.step = opt_int(o, "step");
  if (a.step && *a.step < 0) throw BadField{"\"step\" must be >= 0"};
  a.summary = opt_text(o, "summary");
  a.reason = opt_text(o, "reason");
  a.batch_size = opt_int(o, "batch_size");
  a.micro_batch_size = opt_int(o, "micro_batch_size");
  a.previous_micro_batch_size = opt_int(o, "previous_micro_batch_size");
  a.num_workers = opt_int(o, "num_workers");
  a.previous_num_workers = opt_int(o, "previous_num_workers");
  a.prefetch_factor = opt_int(o, "prefetch_factor");
  a.previous_prefetch_factor = opt_int(o, "previous_prefetch_factor");
  a.prefetch_depth = opt_int(o, "prefetch_depth");
  a.epoch = opt_int(o, "epoch");
  a.finding = opt_text(o, "finding");
  a.summary_file = opt_text(o, "summary_file");
  a.snapshot_file = opt_text(o, "snapshot_file");
  if (const json* p = field(o, "history_pending")) {
    if (!p->is_boolean()) throw BadField{"\"history_pending\" must be true, false or null"};
    a.history_pending = p->get<bool>();
  }
  if (const json* e = field(o, "evidence"); e && !e->is_object())
    throw BadField{"\"evidence\" must be an object or null"};
  a.json = o.dump(-1, ' ', false, json::error_handler_t::replace);
  return a;
}

}  // namespace

void apply_device(Hello& hello, const DeviceUpdate& update) {
  json o = json::parse(hello.json, nullptr, /*allow_exceptions=*/false);
  if (!o.is_object()) o = json::object();
  auto set = [&](std::optional<std::string>& field, const std::optional<std::string>& value,
                 const char* key) {
    if (!value) return;
    field = value;
    o[key] = *value;
  };
  set(hello.torch_version, update.torch_version, "torch_version");
  set(hello.device, update.device, "device");
  set(hello.pci_bus_id, update.pci_bus_id, "pci_bus_id");
  set(hello.device_uuid, update.device_uuid, "device_uuid");
  hello.json = o.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::variant<Message, std::string> parse_message(std::string_view line) {
  if (line.size() >= kMaxMessageBytes)
    return "message longer than " + std::to_string(kMaxMessageBytes - 1) + " bytes";
  try {
    const json o = json::parse(line);  // throws on bad JSON or invalid UTF-8
    if (!o.is_object()) return std::string("not a JSON object");
    const json* type = field(o, "type");
    if (!type || !type->is_string()) return std::string("no \"type\"");
    const auto& t = type->get_ref<const std::string&>();
    if (t == "step") return parse_step(o);
    if (t == "hello") return parse_hello(o);
    if (t == "oom") return parse_oom(o);
    if (t == "error") return parse_error(o);
    if (t == "device") return parse_device(o);
    if (t == "action") return parse_action(o);
    if (t == "bye") return Message(Bye{});
    return Message(Unknown{t});
  } catch (const BadField& e) {
    return e.message;
  } catch (const std::exception& e) {
    return std::string("not JSON: ") + e.what();
  }
}

std::optional<Action> action_of(const RankEvent& event) {
  if (event.kind != "action") return std::nullopt;
  const json o = json::parse(event.detail, nullptr, /*allow_exceptions=*/false);
  if (!o.is_object()) return std::nullopt;
  try {
    Action a = std::get<Action>(parse_action(o));
    a.json = event.detail;
    return a;
  } catch (const BadField&) {
    return std::nullopt;
  }
}

RankEvent rank_event(std::int64_t time_ms, std::int64_t pid, std::optional<std::int64_t> rank,
                     std::string kind, std::string detail) {
  RankEvent e{time_ms, pid, rank, std::move(kind), std::move(detail), std::nullopt};
  if (!e.carries_hello()) return e;
  // The same field rules as on the wire; the event's own pid stands in for a missing one.
  json o = json::parse(e.detail, nullptr, /*allow_exceptions=*/false);
  if (!o.is_object()) return e;
  if (!field(o, "pid")) o["pid"] = pid;
  try {
    e.hello = std::get<Hello>(parse_hello(o));
    e.hello->json = e.detail;
  } catch (const BadField&) {
  }
  return e;
}

}  // namespace gpumon::training
