// SPDX-License-Identifier: MIT
#include "fake_nvml/json_reader.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <vector>

namespace gpumon::fake::detail {

std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

void Node::fail(std::string_view what) const {
  throw ScenarioError((path_.empty() ? std::string("(top level)") : path_) + ": " +
                      std::string(what));
}

const char* Node::type_name() const {
  return value_->type_name();
}

void Node::expect_object(std::initializer_list<std::string_view> allowed) const {
  if (!value_->is_object()) fail(std::string("expected an object, got ") + type_name());
  for (const auto& [key, unused] : value_->items()) {
    bool known = false;
    for (std::string_view a : allowed) known = known || a == key;
    if (known) continue;
    std::string list;
    for (std::string_view a : allowed)
      list += std::string(list.empty() ? "" : ", ") + std::string(a);
    // Keys are user text: cut them short so a hostile key cannot flood the message.
    const std::string shown = key.size() > 64 ? key.substr(0, 64) + "..." : key;
    fail("unknown key \"" + shown + "\" (expected one of: " + list + ")");
  }
}

std::size_t Node::expect_array(std::size_t max_size) const {
  if (!value_->is_array()) fail(std::string("expected an array, got ") + type_name());
  if (value_->size() > max_size) {
    fail("too many elements (" + std::to_string(value_->size()) + ", at most " +
         std::to_string(max_size) + ")");
  }
  return value_->size();
}

std::optional<Node> Node::get(std::string_view key) const {
  const auto it = value_->find(key);
  if (it == value_->end()) return std::nullopt;
  return Node(*it, path_.empty() ? std::string(key) : path_ + "." + std::string(key));
}

Node Node::at(std::string_view key) const {
  auto node = get(key);
  if (!node) fail("missing key \"" + std::string(key) + "\"");
  return *node;
}

Node Node::at(std::size_t index) const {
  return Node(value_->at(index), path_ + "[" + std::to_string(index) + "]");
}

double Node::number(double lo, double hi) const {
  if (!value_->is_number()) fail(std::string("expected a number, got ") + type_name());
  const double v = value_->get<double>();
  if (!std::isfinite(v)) fail("must be a finite number");
  if (v < lo || v > hi) {
    fail("must be between " + format_number(lo) + " and " + format_number(hi) + ", got " +
         format_number(v));
  }
  return v;
}

double Node::number_above(double lo, double hi) const {
  const double v = number(-std::numeric_limits<double>::max(), hi);
  if (!(v > lo)) fail("must be > " + format_number(lo));
  return v;
}

std::uint64_t Node::uint(std::uint64_t max) const {
  if (value_->is_number_unsigned()) {
    const auto v = value_->get<std::uint64_t>();
    if (v > max) fail("must be at most " + std::to_string(max) + ", got " + std::to_string(v));
    return v;
  }
  if (value_->is_number_integer()) fail("must be >= 0");
  if (value_->is_number_float()) {
    const double v = value_->get<double>();
    if (!std::isfinite(v) || v != std::floor(v)) fail("must be a whole number");
    if (v < 0) fail("must be >= 0");
    if (v > static_cast<double>(max)) fail("must be at most " + std::to_string(max));
    return static_cast<std::uint64_t>(v);
  }
  fail(std::string("expected a whole number, got ") + type_name());
}

std::string Node::string(std::size_t max_length) const {
  if (!value_->is_string()) fail(std::string("expected a string, got ") + type_name());
  const auto& s = value_->get_ref<const std::string&>();
  if (s.size() > max_length) {
    fail("too long (" + std::to_string(s.size()) + " characters, at most " +
         std::to_string(max_length) + ")");
  }
  if (s.find('\0') != std::string::npos) fail("must not contain NUL characters");
  return s;
}

bool Node::boolean() const {
  if (!value_->is_boolean()) fail(std::string("expected true or false, got ") + type_name());
  return value_->get<bool>();
}

Json parse_json(std::string_view text, std::size_t max_depth) {
  // The parser callback sees every key; a stack of key sets finds duplicates, and its height is
  // the nesting depth (arrays count too).
  struct Frame {
    bool object = false;
    std::set<std::string> keys;
  };
  std::vector<Frame> stack;
  std::string error;
  auto callback = [&](int /*depth*/, Json::parse_event_t event, Json& parsed) {
    if (!error.empty()) return false;
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        stack.push_back({event == Json::parse_event_t::object_start, {}});
        if (stack.size() > max_depth) {
          error = "nested deeper than " + std::to_string(max_depth) + " levels";
          return false;
        }
        break;
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        if (!stack.empty()) stack.pop_back();
        break;
      case Json::parse_event_t::key:
        if (!stack.empty() && !stack.back().keys.insert(parsed.get<std::string>()).second) {
          const auto& key = parsed.get_ref<const std::string&>();
          error = "duplicate key \"" + (key.size() > 64 ? key.substr(0, 64) + "..." : key) + "\"";
          return false;
        }
        break;
      case Json::parse_event_t::value: break;
    }
    return true;
  };
  Json doc;
  try {
    doc = Json::parse(text.begin(), text.end(), callback, /*allow_exceptions=*/true,
                      /*ignore_comments=*/false);
  } catch (const Json::exception& e) {
    if (error.empty()) throw ScenarioError(std::string("invalid JSON: ") + e.what());
  }
  if (!error.empty()) throw ScenarioError("invalid JSON: " + error);
  return doc;
}

}  // namespace gpumon::fake::detail
