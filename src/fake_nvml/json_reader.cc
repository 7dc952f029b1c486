// SPDX-License-Identifier: MIT
#include "fake_nvml/json_reader.h"

#include <algorithm>
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

namespace {

// Above this, an unknown key's message names the nearest keys instead of all of them.
constexpr std::size_t kMaxKeyList = 400;

// Levenshtein distance (keys are short: a row of at most 65 + 1 cells).
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

const char* Node::type_name() const {
  return value_->type_name();
}

void Node::expect_object(std::initializer_list<std::string_view> allowed) const {
  if (!value_->is_object()) fail(std::string("expected an object, got ") + type_name());
  for (const auto& [key, unused] : value_->items()) {
    bool known = false;
    for (std::string_view a : allowed) known = known || a == key;
    if (known) continue;
    // Keys are user text: cut them short so a hostile key cannot flood the message.
    const std::string shown = key.size() > 64 ? key.substr(0, 64) + "..." : key;
    std::string list;
    for (std::string_view a : allowed)
      list += std::string(list.empty() ? "" : ", ") + std::string(a);
    if (list.size() <= kMaxKeyList) {
      fail("unknown key \"" + shown + "\" (expected one of: " + list + ")");
    }
    // A device takes some 70 keys: name the nearest ones, and where the rest are.
    std::vector<std::pair<std::size_t, std::string_view>> near;
    for (std::string_view a : allowed) near.emplace_back(edit_distance(shown, a), a);
    std::stable_sort(near.begin(), near.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    std::string nearest;
    for (std::size_t i = 0; i < std::min<std::size_t>(3, near.size()); ++i)
      nearest += std::string(i ? ", " : "") + std::string(near[i].second);
    fail("unknown key \"" + shown + "\" (nearest: " + nearest +
         "; every key is in docs/scenarios.md)");
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

namespace {

// A first, linear SAX pass that finds what Json::parse accepts silently: duplicate keys (the
// last one would win) and nesting too deep for comfort. (nlohmann's parser callback could do
// this in one pass, but it rescans the parent on every object end: quadratic on long arrays.)
class StrictnessCheck : public Json::json_sax_t {
 public:
  explicit StrictnessCheck(std::size_t max_depth) : max_depth_(max_depth) {}
  const std::string& error() const { return error_; }

  bool null() override { return true; }
  bool boolean(bool /*value*/) override { return true; }
  bool number_integer(number_integer_t /*value*/) override { return true; }
  bool number_unsigned(number_unsigned_t /*value*/) override { return true; }
  bool number_float(number_float_t /*value*/, const string_t& /*text*/) override { return true; }
  bool string(string_t& /*value*/) override { return true; }
  bool binary(binary_t& /*value*/) override { return true; }
  bool start_object(std::size_t /*elements*/) override {
    keys_.emplace_back();
    return enter();
  }
  bool key(string_t& key) override {
    if (keys_.back().insert(key).second) return true;
    error_ = "duplicate key \"" + (key.size() > 64 ? key.substr(0, 64) + "..." : key) + "\"";
    return false;
  }
  bool end_object() override {
    keys_.pop_back();
    --depth_;
    return true;
  }
  bool start_array(std::size_t /*elements*/) override { return enter(); }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const Json::exception& e) override {
    error_ = e.what();
    return false;
  }

 private:
  bool enter() {
    if (++depth_ <= max_depth_) return true;
    error_ = "nested deeper than " + std::to_string(max_depth_) + " levels";
    return false;
  }
  std::size_t max_depth_;
  std::size_t depth_ = 0;
  std::vector<std::set<std::string>> keys_;
  std::string error_;
};

}  // namespace

Json parse_json(std::string_view text, std::size_t max_depth) {
  StrictnessCheck check(max_depth);
  if (!Json::sax_parse(text.begin(), text.end(), &check) || !check.error().empty()) {
    throw ScenarioError("invalid JSON: " + check.error());
  }
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    throw ScenarioError(std::string("invalid JSON: ") + e.what());
  }
}

}  // namespace gpumon::fake::detail
