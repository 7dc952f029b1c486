// SPDX-License-Identifier: MIT
// A gtest fixture that loads the fake library through gpumon's real loader (NvmlLibrary) and
// calls its entry points directly, for tests of the fake's NVML semantics.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "fake_nvml/fake_test_env.h"
#include "nvml/nvml_library.h"

namespace gpumon::fake::testing {

class FakeNvmlTest : public ::testing::Test {
 protected:
  /// Points the environment at `scenario` and loads the library (does not call nvmlInit).
  void load(const std::string& scenario, double offset_s = 0, double scale = 1) {
    env_.reset();  // restore the previous environment before setting the new one
    env_ = std::make_unique<FakeScenario>(scenario, offset_s, scale);
    nvml::LoadError error;
    lib_ = nvml::NvmlLibrary::load(kFakeLibrary, &error);
    ASSERT_TRUE(lib_) << error.message;
    hooks_ = Hooks::get();
    ASSERT_NE(hooks_.call_count, nullptr);
  }
  /// load() and nvmlInit.
  void open(const std::string& scenario, double offset_s = 0, double scale = 1) {
    load(scenario, offset_s, scale);
    ASSERT_EQ(fn().init(), NVML_SUCCESS);
  }
  // Leaves the library uninitialised for the next test in this process.
  void TearDown() override {
    if (lib_) {
      while (fn().shutdown() == NVML_SUCCESS) {
      }
    }
  }
  const nvml::NvmlFunctions& fn() const { return lib_->fn(); }
  nvmlDevice_t device(unsigned index) {
    nvmlDevice_t h = nullptr;
    EXPECT_EQ(fn().device_get_handle_by_index(index, &h), NVML_SUCCESS);
    return h;
  }

  std::unique_ptr<FakeScenario> env_;
  std::unique_ptr<nvml::NvmlLibrary> lib_;
  Hooks hooks_;
};

}  // namespace gpumon::fake::testing
