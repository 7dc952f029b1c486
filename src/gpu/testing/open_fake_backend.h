// SPDX-License-Identifier: MIT
// Test-only: an NvmlBackend over gpumon's fake libnvidia-ml.so.1 (the scenario comes from the
// environment the test set, e.g. fake::testing::FakeScenario). Header-only.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include "fake_nvml/fake_test_env.h"
#include "gpu/nvml_backend.h"

namespace gpumon::testing {

/// Opens the fake library; a failure is a test failure (with NVML's message) and nullptr.
inline std::unique_ptr<NvmlBackend> open_fake_backend(
    std::chrono::milliseconds lost_retry = std::chrono::milliseconds(5000)) {
  NvmlOpenOptions options;
  options.library_path = fake::testing::kFakeLibrary;
  options.lost_retry = lost_retry;
  NvmlOpenError error;
  auto backend = NvmlBackend::open(options, &error);
  EXPECT_NE(backend, nullptr) << error.message;
  return backend;
}

}  // namespace gpumon::testing
