// SPDX-License-Identifier: MIT
// Test-only: an NvmlBackend over gpumon's fake libnvidia-ml.so.1 (the scenario comes from the
// environment the test set, e.g. fake::testing::FakeScenario). Header-only.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <utility>

#include "fake_nvml/fake_test_env.h"
#include "gpu/nvml_backend.h"

namespace gpumon::testing {

/// A steady time that moves only when the test moves it, for NvmlOpenOptions::now (with
/// fake::testing::Hooks::set_time for the scenario's time). Thread-safety: one thread.
class ManualSteadyClock {
 public:
  std::function<std::chrono::steady_clock::time_point()> function() {
    return [this] { return now_; };
  }
  void advance(std::chrono::steady_clock::duration d) { now_ += d; }

 private:
  std::chrono::steady_clock::time_point now_{std::chrono::hours(1)};
};

/// Opens the fake library; a failure is a test failure (with NVML's message) and nullptr.
/// `now`: the backend's clock (empty: steady_clock).
inline std::unique_ptr<NvmlBackend> open_fake_backend(
    std::chrono::milliseconds lost_retry = std::chrono::milliseconds(5000),
    std::function<std::chrono::steady_clock::time_point()> now = {}) {
  NvmlOpenOptions options;
  options.library_path = fake::testing::kFakeLibrary;
  options.lost_retry = lost_retry;
  options.now = std::move(now);
  NvmlOpenError error;
  auto backend = NvmlBackend::open(options, &error);
  EXPECT_NE(backend, nullptr) << error.message;
  return backend;
}

}  // namespace gpumon::testing
