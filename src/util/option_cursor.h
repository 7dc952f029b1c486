// SPDX-License-Identifier: MIT
// OptionCursor: walks a subcommand's arguments for the commands that parse by hand (export,
// report, serve): "--name value", "--name=value" and "-o value". One place for the "=value"
// split and for taking the next argument as a value, so every command reads them alike.
//
// Thread-safety: a value type used by one thread; it keeps a reference to `args`.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gpumon::util {

class OptionCursor {
 public:
  explicit OptionCursor(const std::vector<std::string>& args) : args_(args) {}

  /// Moves to the next argument; false after the last one.
  bool next() {
    index_ = started_ ? index_ + 1 : 0;
    started_ = true;
    if (index_ >= args_.size()) return false;
    name_ = args_[index_];
    inline_value_.reset();
    if (const std::size_t eq = name_.find('=');
        name_.starts_with("--") && eq != std::string::npos) {
      inline_value_ = name_.substr(eq + 1);
      name_.resize(eq);
    }
    return true;
  }

  /// The argument without its "=value" ("--format" for "--format=csv").
  const std::string& name() const { return name_; }
  /// The argument as it was given.
  const std::string& arg() const { return args_[index_]; }
  /// Whether it came as "--name=value".
  bool has_inline_value() const { return inline_value_.has_value(); }
  /// Its value: the "=value" part, else the next argument (which is then consumed); nullopt
  /// when there is neither.
  std::optional<std::string> value() {
    if (inline_value_) return inline_value_;
    if (index_ + 1 < args_.size()) return args_[++index_];
    return std::nullopt;
  }

 private:
  const std::vector<std::string>& args_;
  std::size_t index_ = 0;
  bool started_ = false;
  std::string name_;
  std::optional<std::string> inline_value_;
};

}  // namespace gpumon::util
