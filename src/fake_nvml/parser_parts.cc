// SPDX-License-Identifier: MIT
// Series, error and latency rules, processes and events of a scenario.
#include <algorithm>
#include <cstdio>

#include "fake_nvml/parser_internal.h"
#include "fake_nvml/scenario_parser.h"
#include "fake_nvml/symbols.h"

namespace gpumon::fake::detail {
namespace {

std::vector<Series::Point> parse_point_list(const Node& n, ParseContext& ctx) {
  const std::size_t size = n.expect_array(kMaxPointsPerSeries);
  if (size == 0) n.fail("needs at least one [t_s, value] point");
  spend_items(n, size, ctx);
  std::vector<Series::Point> points;
  points.reserve(size);
  for (std::size_t i = 0; i < size; ++i) {
    const Node p = n.at(i);
    if (p.expect_array(2) != 2) p.fail("expected [t_s, value]");
    const double t = p.at(std::size_t{0}).number(0, kMaxTimeS);
    if (!points.empty() && t <= points.back().t_s) p.fail("times must increase strictly");
    points.push_back({t, p.at(std::size_t{1}).number(-kMaxValue, kMaxValue)});
  }
  return points;
}

Series::Shape parse_shape(const Node& n) {
  const std::string s = n.string(16);
  if (s == "sine") return Series::Shape::kSine;
  if (s == "square") return Series::Shape::kSquare;
  if (s == "sawtooth") return Series::Shape::kSawtooth;
  if (s == "triangle") return Series::Shape::kTriangle;
  n.fail("must be one of sine, square, sawtooth, triangle");
}

double parse_window(const std::optional<Node>& n, double fallback) {
  return n ? n->number(0, kMaxTimeS) : fallback;
}

}  // namespace

void spend_items(const Node& n, std::size_t count, ParseContext& ctx) {
  ctx.items_total += count;
  if (ctx.items_total > kMaxItemsTotal) {
    n.fail("the scenario is too big (more than " + std::to_string(kMaxItemsTotal) +
           " points, processes, events and rules in all devices together)");
  }
}

std::uint64_t noise_stream(std::uint64_t seed, unsigned device, unsigned field) {
  return seed * 0x100000001B3ULL ^ (static_cast<std::uint64_t>(device) << 16U) ^ field;
}

Series parse_series(const Node& n, bool code_field, std::uint64_t stream, ParseContext& ctx) {
  Series s;
  s.noise_stream = stream;
  if (n.is_number()) {
    s.value = n.number(-kMaxValue, kMaxValue);
    return s;
  }
  n.expect_object({"constant", "ramp", "step", "points", "periodic", "noise", "clamp"});
  int kinds = 0;
  for (const char* k : {"constant", "ramp", "step", "points", "periodic"})
    kinds += n.get(k) ? 1 : 0;
  if (kinds != 1) n.fail("needs exactly one of constant, ramp, step, points, periodic");

  if (auto c = n.get("constant")) {
    s.value = c->number(-kMaxValue, kMaxValue);
  } else if (auto r = n.get("ramp")) {
    r->expect_object({"from", "to", "start_s", "duration_s"});
    s.kind = Series::Kind::kRamp;
    s.from = r->at("from").number(-kMaxValue, kMaxValue);
    s.to = r->at("to").number(-kMaxValue, kMaxValue);
    s.start_s = parse_window(r->get("start_s"), 0);
    s.duration_s = r->at("duration_s").number_above(0, kMaxTimeS);
  } else if (auto st = n.get("step")) {
    s.kind = Series::Kind::kPoints;
    s.points = parse_point_list(*st, ctx);
  } else if (auto p = n.get("points")) {
    p->expect_object({"values", "interpolate", "repeat_s"});
    s.kind = Series::Kind::kPoints;
    s.points = parse_point_list(p->at("values"), ctx);
    if (auto interp = p->get("interpolate")) {
      const std::string mode = interp->string(16);
      if (mode != "hold" && mode != "linear") interp->fail("must be \"hold\" or \"linear\"");
      s.linear = mode == "linear";
      if (s.linear && code_field) interp->fail("codes and bitmasks cannot be interpolated");
    }
    if (auto rep = p->get("repeat_s")) {
      s.repeat_s = rep->number_above(0, kMaxTimeS);
      if (s.repeat_s <= s.points.back().t_s) rep->fail("must be > the last point's time");
    }
  } else if (auto per = n.get("periodic")) {
    per->expect_object({"min", "max", "period_s", "shape", "phase_s", "duty"});
    s.kind = Series::Kind::kPeriodic;
    s.min = per->at("min").number(-kMaxValue, kMaxValue);
    s.max = per->at("max").number(-kMaxValue, kMaxValue);
    if (s.max < s.min) per->at("max").fail("must be >= min");
    s.period_s = per->at("period_s").number(1e-3, kMaxTimeS);
    if (auto shape = per->get("shape")) s.shape = parse_shape(*shape);
    if (auto phase = per->get("phase_s")) s.phase_s = phase->number(-kMaxTimeS, kMaxTimeS);
    if (auto duty = per->get("duty")) {
      s.duty = duty->number(0, 1);
      if (s.shape != Series::Shape::kSquare) duty->fail("only square waves have a duty cycle");
    }
  }
  if (auto noise = n.get("noise")) {
    if (code_field) noise->fail("codes and bitmasks cannot have noise");
    s.noise = noise->number(0, kMaxValue);
  }
  if (auto clamp = n.get("clamp")) {
    if (clamp->expect_array(2) != 2) clamp->fail("expected [min, max]");
    s.clamp_min = clamp->at(std::size_t{0}).number(-kMaxValue, kMaxValue);
    s.clamp_max = clamp->at(std::size_t{1}).number(-kMaxValue, kMaxValue);
    if (s.clamp_max < s.clamp_min) clamp->fail("max must be >= min");
  }
  return s;
}

std::vector<ErrorRule> parse_errors(const Node& n, ParseContext& ctx) {
  std::vector<ErrorRule> rules(n.expect_array(kMaxRules));
  spend_items(n, rules.size(), ctx);
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const Node r = n.at(i);
    r.expect_object({"field", "call", "error", "from_s", "until_s", "every_nth_call"});
    ErrorRule& rule = rules[i];
    if (r.get("field").has_value() == r.get("call").has_value()) {
      r.fail("needs exactly one of \"field\" and \"call\"");
    }
    if (auto f = r.get("field")) {
      rule.field = field_from_name(f->string(64));
      if (!rule.field) f->fail("unknown field (see docs/scenarios.md for the list)");
    } else {
      const Node c = r.at("call");
      rule.call = c.string(128);
      if (!is_known_call(rule.call)) c.fail("not an NVML entry point the fake library exports");
    }
    const Node e = r.at("error");
    const auto code = return_code_from_name(e.string(64));
    if (!code || *code == 0) e.fail("must be an NVML error name such as \"NOT_SUPPORTED\"");
    rule.code = *code;
    rule.from_s = parse_window(r.get("from_s"), rule.from_s);
    rule.until_s = parse_window(r.get("until_s"), rule.until_s);
    if (rule.until_s <= rule.from_s) r.fail("until_s must be > from_s");
    if (auto nth = r.get("every_nth_call")) {
      rule.every_nth = nth->uint(1ULL << 40U);
      if (rule.every_nth == 0) nth->fail("must be >= 1");
    }
  }
  return rules;
}

std::vector<LatencyRule> parse_latencies(const Node& n, ParseContext& ctx) {
  // Keys are entry points, so the object is checked here rather than with expect_object.
  if (!n.is_object()) n.fail(std::string("expected an object, got ") + n.json().type_name());
  if (n.json().size() > kMaxRules) n.fail("too many rules");
  spend_items(n, n.json().size(), ctx);
  std::vector<LatencyRule> rules;
  for (const auto& [call, unused] : n.json().items()) {
    const Node r = n.at(call);
    LatencyRule rule;
    rule.call = call;
    if (!is_known_call(call)) r.fail("not an NVML entry point the fake library exports");
    constexpr double kMaxLatencyUs = 60e6;
    if (r.is_number()) {
      rule.us = r.number(0, kMaxLatencyUs);
    } else {
      r.expect_object({"us", "mode", "from_s", "until_s"});
      rule.us = r.at("us").number(0, kMaxLatencyUs);
      if (auto mode = r.get("mode")) {
        const std::string m = mode->string(16);
        if (m != "busy" && m != "sleep") mode->fail("must be \"busy\" or \"sleep\"");
        rule.sleep = m == "sleep";
      }
      rule.from_s = parse_window(r.get("from_s"), rule.from_s);
      rule.until_s = parse_window(r.get("until_s"), rule.until_s);
      if (rule.until_s <= rule.from_s) r.fail("until_s must be > from_s");
    }
    rules.push_back(std::move(rule));
  }
  return rules;
}

}  // namespace gpumon::fake::detail
