// SPDX-License-Identifier: MIT
// Helpers for tests that run gpumon's real loader and backend against the fake NVML library:
// environment set for one test and restored after, scenario files written on the fly, and the
// fake library's gpumonFake* hooks. Test-only; header-only.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace gpumon::fake::testing {

/// Path of build/fake-nvml/libnvidia-ml.so.1 and of testdata/scenarios (set by CMake).
inline constexpr const char* kFakeLibrary = GPUMON_TEST_FAKE_NVML_PATH;
inline constexpr const char* kScenarioDir = GPUMON_TEST_SCENARIO_DIR;

/// Sets environment variables for its lifetime; restores the previous values after.
class ScopedEnv {
 public:
  ScopedEnv() = default;
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    for (const auto& [name, old] : saved_) {
      if (old) {
        setenv(name.c_str(), old->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }
  void set(const std::string& name, const std::string& value) {
    remember(name);
    setenv(name.c_str(), value.c_str(), 1);
  }
  void unset(const std::string& name) {
    remember(name);
    unsetenv(name.c_str());
  }

 private:
  void remember(const std::string& name) {
    if (saved_.count(name) != 0) return;
    const char* old = std::getenv(name.c_str());
    saved_[name] = old != nullptr ? std::optional<std::string>(old) : std::nullopt;
  }
  std::map<std::string, std::optional<std::string>> saved_;
};

/// FakeScenario's `scale` for a scenario whose time stands at the offset until the test moves
/// it with Hooks::set_time: what happens at a scenario time then never depends on how fast the
/// machine runs the test.
inline constexpr double kTimeStandsStill = 0;

/// Points gpumon at the fake library playing `scenario` (a name or a path), starting at
/// scenario time `offset_s` and running `scale` times faster than real time (kTimeStandsStill:
/// not running at all).
class FakeScenario {
 public:
  explicit FakeScenario(const std::string& scenario, double offset_s = 0, double scale = 1) {
    env_.set("GPUMON_NVML_LIBRARY", kFakeLibrary);
    env_.set("GPUMON_SCENARIO_DIR", kScenarioDir);
    env_.set("GPUMON_FAKE_SCENARIO", scenario);
    env_.set("GPUMON_FAKE_TIME_OFFSET_S", std::to_string(offset_s));
    env_.set("GPUMON_FAKE_TIME_SCALE", std::to_string(scale));
  }
  ScopedEnv& env() { return env_; }

 private:
  ScopedEnv env_;
};

/// Writes `json` to a fresh file and returns its path (removed with the object).
class TempScenario {
 public:
  explicit TempScenario(std::string_view json, const std::string& stem = "scenario") {
    dir_ = std::filesystem::temp_directory_path() /
           ("gpumon-fake-" + std::to_string(getpid()) + "-" + std::to_string(counter()++));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / (stem + ".json")).string();
    std::ofstream(path_) << json;
  }
  ~TempScenario() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  TempScenario(const TempScenario&) = delete;
  TempScenario& operator=(const TempScenario&) = delete;
  const std::string& path() const { return path_; }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::filesystem::path dir_;
  std::string path_;
};

/// The fake library's test hooks (the library is loaded once per process; this finds it).
struct Hooks {
  unsigned long long (*call_count)(const char*) = nullptr;
  void (*reset_counts)() = nullptr;
  const char* (*scenario_name)() = nullptr;
  /// Scenario time stands at the given seconds from now on; event waits look again.
  void (*set_time)(double) = nullptr;

  static Hooks get() {
    Hooks h;
    void* lib = dlopen(kFakeLibrary, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return h;
    h.call_count =
        reinterpret_cast<unsigned long long (*)(const char*)>(dlsym(lib, "gpumonFakeCallCount"));
    h.reset_counts = reinterpret_cast<void (*)()>(dlsym(lib, "gpumonFakeResetCounts"));
    h.scenario_name = reinterpret_cast<const char* (*)()>(dlsym(lib, "gpumonFakeScenarioName"));
    h.set_time = reinterpret_cast<void (*)(double)>(dlsym(lib, "gpumonFakeSetTime"));
    return h;
  }
};

}  // namespace gpumon::fake::testing
