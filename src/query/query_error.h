// SPDX-License-Identifier: MIT
// QueryError and Expected<T>: how `gpumon query`'s parsers report a problem the user can fix.
// Parsers never throw and never print; the command prints `message` to stderr and exits with
// `exit_code` (nvidia-smi's codes: 2 invalid argument, 4 no permission, 6 no matching device,
// 9 driver not loaded, 12 NVML library not found, 255 other).
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace gpumon::query {

inline constexpr int kExitOk = 0;
inline constexpr int kExitIoError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitNoPermission = 4;
inline constexpr int kExitNoDevice = 6;
inline constexpr int kExitDriverNotLoaded = 9;
inline constexpr int kExitLibraryNotFound = 12;
inline constexpr int kExitOther = 255;

struct QueryError {
  int exit_code = kExitUsage;
  /// One or more complete lines, each ending in '\n', printed as they are.
  std::string message;
};

/// Usage error with the "gpumon: " prefix and a trailing newline.
inline QueryError usage_error(std::string text) {
  return QueryError{kExitUsage, "gpumon: " + std::move(text) + "\n"};
}

/// A value or the QueryError that prevented it (std::expected arrives only in C++23).
template <typename T>
class Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}           // NOLINT(google-explicit-constructor)
  Expected(QueryError error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const QueryError& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, QueryError> v_;
};

}  // namespace gpumon::query
