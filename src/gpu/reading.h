// SPDX-License-Identifier: MIT
// Reading<T>: a value NVML gave, or the reason it did not. Missing is never 0: formatters print
// the reason ("[N/A]", "[Not Supported]", null in JSON), never a number.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpumon {

/// Why a reading has no value. Maps onto nvidia-smi's tokens where one exists.
enum class Missing : std::uint8_t {
  kNotAvailable,  ///< "[N/A]": the driver has no value right now, or it was not read
  kNotSupported,  ///< "[Not Supported]": this GPU or driver cannot give it
  kNoPermission,  ///< "[Insufficient Permissions]"
  kGpuLost,       ///< the GPU fell off the bus ("[GPU is lost]")
  kError,         ///< any other NVML error ("[Unknown Error]")
  /// The GPU's reader was still inside an earlier NVML call when the tick was published
  /// (DeviceSample::stale says which call and since when): a hung call, not a lost GPU.
  kStale,
  /// "[Requested functionality has been deprecated]": the driver no longer answers this call
  /// (nvmlDeviceGetDisplayMode on driver 580).
  kDeprecated,
};

std::string_view to_string(Missing why);

template <typename T>
class Reading {
 public:
  Reading() = default;
  Reading(T value) : value_(value) {}  // NOLINT(google-explicit-constructor): reads naturally
  static Reading missing(Missing why) {
    Reading r;
    r.why_ = why;
    return r;
  }

  bool has_value() const { return value_.has_value(); }
  explicit operator bool() const { return has_value(); }
  const T& value() const { return *value_; }
  T& value() { return *value_; }  ///< only when has_value()
  const T& operator*() const { return *value_; }
  const T* operator->() const { return &*value_; }
  T value_or(T fallback) const { return value_.value_or(fallback); }
  /// Meaningful only when !has_value().
  Missing why() const { return why_; }

  friend bool operator==(const Reading& a, const Reading& b) {
    return a.value_ == b.value_ && (a.value_.has_value() || a.why_ == b.why_);
  }

 private:
  std::optional<T> value_;
  Missing why_ = Missing::kNotAvailable;
};

}  // namespace gpumon
