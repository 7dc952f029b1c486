// SPDX-License-Identifier: MIT
#include "client/messages.h"

#include <charconv>
#include <cstdlib>
#include <string_view>

#include "util/json_text.h"

namespace gpumon::client {
namespace {

using util::append_json_double;
using util::append_json_int;
using util::append_json_string;

void append_key(std::string& out, std::string_view key) {
  out += ",\"";
  out += key;
  out += "\":";
}

// Appends `v` with `append`, or null when it is absent (missing is never 0).
template <typename T, typename Append>
void append_or_null(std::string& out, const std::optional<T>& v, Append append) {
  if (v) {
    append(out, *v);
  } else {
    out += "null";
  }
}

void append_opt_int(std::string& out, std::string_view key, std::optional<std::int64_t> v) {
  append_key(out, key);
  append_or_null(out, v, append_json_int);
}

void append_opt_text(std::string& out, std::string_view key, const std::optional<std::string>& v) {
  append_key(out, key);
  append_or_null(out, v,
                 [](std::string& o, const std::string& text) { append_json_string(o, text); });
}

void append_mem(std::string& out, const AllocatorStats& m) {
  out += "{\"allocated\":";
  append_or_null(out, m.allocated_bytes, append_json_int);
  append_opt_int(out, "reserved", m.reserved_bytes);
  append_opt_int(out, "active", m.active_bytes);
  append_opt_int(out, "inactive_split", m.inactive_split_bytes);
  append_opt_int(out, "allocated_peak", m.allocated_peak_bytes);
  append_opt_int(out, "reserved_peak", m.reserved_peak_bytes);
  append_opt_int(out, "num_alloc_retries", m.num_alloc_retries);
  append_opt_int(out, "num_ooms", m.num_ooms);
  out += '}';
}

// The fields naming the device: the hello's, and the whole of a `device` message.
void append_device_fields(std::string& out, const HelloFields& h) {
  append_opt_text(out, "torch_version", h.torch_version);
  append_opt_text(out, "device", h.device);
  append_opt_text(out, "pci_bus_id", h.pci_bus_id);
  append_opt_text(out, "device_uuid", h.device_uuid);
}

}  // namespace

std::string hello_message(const HelloFields& h) {
  std::string out = "{\"type\":\"hello\",\"v\":1,\"pid\":";
  append_json_int(out, h.pid);
  append_opt_int(out, "rank", h.rank);
  append_opt_int(out, "local_rank", h.local_rank);
  append_opt_int(out, "world_size", h.world_size);
  append_opt_text(out, "hostname", h.hostname);
  append_device_fields(out, h);
  append_opt_text(out, "cuda_visible_devices", h.cuda_visible_devices);
  append_opt_text(out, "cuda_device_order", h.cuda_device_order);
  if (!h.job.empty()) {  // only the known fields, as the agent's JSON writes them
    append_key(out, "job");
    char sep = '{';
    job::for_each_field(h.job, [&](std::string_view key, const std::string& value) {
      if (value.empty()) return;
      out += sep;
      sep = ',';
      append_json_string(out, key);
      out += ':';
      append_json_string(out, value);
    });
    out += '}';
  }
  out += '}';
  return out;
}

std::string device_message(const HelloFields& h) {
  std::string out = "{\"type\":\"device\"";
  append_device_fields(out, h);
  out += '}';
  return out;
}

void step_message(const StepFields& s, std::string& out) {
  out.assign("{\"type\":\"step\",\"step\":");
  append_json_int(out, s.step);
  out += ",\"t_start\":";
  append_json_double(out, s.t_start_s);
  out += ",\"t_end\":";
  append_json_double(out, s.t_start_s + s.cpu_step_s);
  out += ",\"cpu_step_s\":";
  append_json_double(out, s.cpu_step_s);
  out += ",\"gpu_step_s\":";
  append_or_null(out, s.gpu_step_s, append_json_double);
  out += ",\"data_wait_s\":";
  append_or_null(out, s.data_wait_s, append_json_double);
  out += ",\"mem\":";
  if (s.mem) {
    append_mem(out, *s.mem);
  } else {
    out += "null";
  }
  out += '}';
}

std::string oom_message(const OomFields& o) {
  std::string out = "{\"type\":\"oom\",\"step\":";
  append_json_int(out, o.step);
  append_opt_int(out, "requested_bytes", o.requested_bytes);
  append_opt_text(out, "device", o.device);
  // A message is at most kMaxMessageBytes: a path too long to fit is left out (the process
  // prints it on stderr too).
  if (o.path && o.path->size() < 3500) append_opt_text(out, "path", o.path);
  out += '}';
  return out;
}

std::optional<std::int64_t> env_int(const char* name) {
  const char* raw = std::getenv(name);
  if (raw == nullptr) return std::nullopt;
  std::string_view v(raw);
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!v.empty() && blank(v.front())) v.remove_prefix(1);
  while (!v.empty() && blank(v.back())) v.remove_suffix(1);
  if (!v.empty() && v.front() == '+') v.remove_prefix(1);
  std::int64_t out = 0;
  const auto r = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size()) return std::nullopt;
  return out;
}

}  // namespace gpumon::client
