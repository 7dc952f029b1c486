// SPDX-License-Identifier: MIT
// Strict reading of JSON for the scenario parser: every accessor checks type and range and, on
// failure, throws ScenarioError naming the JSON path ("devices[2].fields.power_draw_mw"). The
// exceptions stay inside the parser; parse_scenario() turns them into an error value.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpumon::fake::detail {

using Json = nlohmann::json;

class ScenarioError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A JSON value together with its path from the document root.
class Node {
 public:
  Node(const Json& value, std::string path) : value_(&value), path_(std::move(path)) {}

  const Json& json() const { return *value_; }
  const std::string& path() const { return path_; }
  [[noreturn]] void fail(std::string_view what) const;

  bool is_object() const { return value_->is_object(); }
  bool is_array() const { return value_->is_array(); }
  bool is_number() const { return value_->is_number(); }
  bool is_string() const { return value_->is_string(); }

  /// Requires an object whose keys are all in `allowed`.
  void expect_object(std::initializer_list<std::string_view> allowed) const;
  /// Requires an array of at most `max_size` elements; returns its size.
  std::size_t expect_array(std::size_t max_size) const;

  /// Member `key` if present (the object must have been checked with expect_object).
  std::optional<Node> get(std::string_view key) const;
  Node at(std::string_view key) const;  ///< required member
  Node at(std::size_t index) const;     ///< array element

  /// A finite number in [lo, hi].
  double number(double lo, double hi) const;
  /// A finite number > lo and <= hi ("must be > 0").
  double number_above(double lo, double hi) const;
  /// A whole number in [0, max] (1e9 is accepted, 1.5 is not).
  std::uint64_t uint(std::uint64_t max) const;
  std::string string(std::size_t max_length) const;
  bool boolean() const;

 private:
  const char* type_name() const;
  const Json* value_;
  std::string path_;
};

/// A number as a person writes it: 0, 1.5, 1e+18.
std::string format_number(double v);

/// Parses JSON text strictly: duplicate keys and nesting deeper than `max_depth` are errors.
/// Throws ScenarioError.
Json parse_json(std::string_view text, std::size_t max_depth);

}  // namespace gpumon::fake::detail
