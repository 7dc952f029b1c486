// SPDX-License-Identifier: MIT
// Processes, XID events and "{index}" placeholders of a scenario device.
#include <algorithm>

#include "fake_nvml/parser_internal.h"

namespace gpumon::fake::detail {

std::string expand_placeholders(const Node& n, const std::string& text, unsigned index) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t open = text.find('{', pos);
    if (open == std::string::npos) break;
    const std::size_t close = text.find('}', open);
    if (close == std::string::npos)
      n.fail("unclosed '{' (placeholders are {index} or {index:04x})");
    out.append(text, pos, open - pos);
    const std::string token = text.substr(open + 1, close - open - 1);
    std::string spec = "d";
    if (token.rfind("index:", 0) == 0) {
      spec = token.substr(6);
    } else if (token != "index") {
      n.fail("unknown placeholder (placeholders are {index} or {index:04x})");
    }
    // spec: optional 0, optional width (1-2 digits), then d, x or X.
    const bool valid =
        !spec.empty() && spec.size() <= 4 &&
        std::string_view("dxX").find(spec.back()) != std::string_view::npos &&
        std::all_of(spec.begin(), spec.end() - 1, [](char c) { return c >= '0' && c <= '9'; });
    if (!valid) n.fail("bad placeholder format (use d, x or X with an optional 0 and width)");
    const char conv = spec.back();
    const std::string digits_of_width = spec.substr(0, spec.size() - 1);
    const std::size_t width = digits_of_width.empty() ? 0 : std::stoul(digits_of_width);
    const char pad = !digits_of_width.empty() && digits_of_width[0] == '0' ? '0' : ' ';
    const char* alphabet = conv == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
    const unsigned base = conv == 'd' ? 10 : 16;
    std::string number;
    unsigned v = index;
    do {
      number.insert(number.begin(), alphabet[v % base]);
      v /= base;
    } while (v != 0);
    if (number.size() < width) number.insert(0, width - number.size(), pad);
    out += number;
    pos = close + 1;
  }
  out.append(text, pos, std::string::npos);
  return out;
}

std::string expanded_string(const Node& n, std::size_t max_length, unsigned index) {
  constexpr std::size_t kMaxTemplate = 256;  // placeholders may make the text shorter or longer
  std::string s = expand_placeholders(n, n.string(std::max(max_length, kMaxTemplate)), index);
  if (s.size() > max_length) n.fail("too long after expanding placeholders");
  return s;
}

std::vector<ProcessSpec> parse_processes(const Node& n, unsigned device_index, ParseContext& ctx) {
  std::vector<ProcessSpec> out(n.expect_array(kMaxProcessesPerDevice));
  spend_items(n, out.size(), ctx);
  ctx.processes_total += out.size();
  if (ctx.processes_total > kMaxProcessesTotal) {
    n.fail("too many processes in all devices together (at most " +
           std::to_string(kMaxProcessesTotal) + ")");
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    const Node p = n.at(i);
    p.expect_object({"pid", "name", "used_memory_bytes", "start_s", "end_s", "visible_from_call",
                     "sm_util_pct", "mem_util_pct"});
    ProcessSpec& proc = out[i];
    const Node pid = p.at("pid");
    constexpr std::uint64_t kMaxPid = 0x7FFFFFFF;
    if (pid.is_string()) {  // "{index}" placeholders make distinct pids per templated device
      const std::string text = expanded_string(pid, 10, device_index);
      const bool digits = !text.empty() && std::all_of(text.begin(), text.end(),
                                                       [](char c) { return c >= '0' && c <= '9'; });
      if (!digits || std::stoull(text) > kMaxPid || std::stoull(text) == 0) {
        pid.fail("must expand to a process id between 1 and 2147483647");
      }
      proc.pid = static_cast<unsigned>(std::stoull(text));
    } else {
      proc.pid = static_cast<unsigned>(pid.uint(kMaxPid));
      if (proc.pid == 0) pid.fail("must be >= 1");
    }
    proc.name = expanded_string(p.at("name"), 1023, device_index);
    if (proc.name.empty()) p.at("name").fail("must not be empty");
    if (auto mem = p.get("used_memory_bytes")) {
      proc.used_memory_bytes =
          parse_series(*mem, false, noise_stream(ctx.seed, device_index, 1000U + i), ctx);
    }
    if (auto start = p.get("start_s")) proc.start_s = start->number(0, kMaxTimeS);
    if (auto end = p.get("end_s")) {
      proc.end_s = end->number(0, kMaxTimeS);
      if (proc.end_s <= proc.start_s) end->fail("must be > start_s");
    }
    if (auto from = p.get("visible_from_call")) proc.visible_from_call = from->uint(1ULL << 40U);
    if (auto sm = p.get("sm_util_pct")) {
      proc.sm_util_pct =
          parse_series(*sm, false, noise_stream(ctx.seed, device_index, 2000U + i), ctx);
    }
    if (auto mem = p.get("mem_util_pct")) {
      proc.mem_util_pct =
          parse_series(*mem, false, noise_stream(ctx.seed, device_index, 3000U + i), ctx);
    }
  }
  return out;
}

std::vector<XidEvent> parse_xid_events(const Node& n, ParseContext& ctx) {
  std::vector<XidEvent> out(n.expect_array(kMaxEventsPerDevice));
  spend_items(n, out.size(), ctx);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const Node e = n.at(i);
    e.expect_object({"at_s", "xid"});
    out[i].at_s = e.at("at_s").number(0, kMaxTimeS);
    out[i].xid = e.at("xid").uint(0xFFFFFFFFULL);
  }
  return out;
}

std::vector<XidEvent> parse_ecc_events(const Node& n, ParseContext& ctx) {
  std::vector<XidEvent> out(n.expect_array(kMaxEventsPerDevice));
  spend_items(n, out.size(), ctx);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const Node e = n.at(i);
    e.expect_object({"at_s", "type"});
    out[i].at_s = e.at("at_s").number(0, kMaxTimeS);
    const std::string type = e.at("type").string(16);
    if (type != "single_bit" && type != "double_bit") {
      e.at("type").fail("must be \"single_bit\" or \"double_bit\"");
    }
    out[i].event_type =
        type == "single_bit" ? 0x1 : 0x2;  // nvmlEventType{Single,Double}BitEccError
  }
  return out;
}

void sort_events(std::vector<XidEvent>& events) {
  std::stable_sort(events.begin(), events.end(),
                   [](const XidEvent& a, const XidEvent& b) { return a.at_s < b.at_s; });
}

}  // namespace gpumon::fake::detail
