// SPDX-License-Identifier: MIT
// NvmlLibrary against real shared objects: a missing file, a stub that lacks entry points, and
// gpumon's fake NVML (which must export every name of nvml_entry_points.inc).
#include "nvml/nvml_library.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fake_nvml/fake_test_env.h"

namespace gpumon::nvml {
namespace {

using fake::testing::FakeScenario;
using fake::testing::kFakeLibrary;
using fake::testing::ScopedEnv;

// Every symbol name of the list, and the preferred (first) name of each entry point.
std::vector<std::string> all_names() {
  return {
#define GPUMON_NVML_REQUIRED(member, ret, params, ...) __VA_ARGS__,
#define GPUMON_NVML_OPTIONAL(member, ret, params, ...) __VA_ARGS__,
#include "nvml/nvml_entry_points.inc"
#undef GPUMON_NVML_REQUIRED
#undef GPUMON_NVML_OPTIONAL
  };
}
template <typename... Names>
std::string first_of(const char* first, Names...) {
  return first;
}
std::vector<std::string> preferred_names() {
  return {
#define GPUMON_NVML_REQUIRED(member, ret, params, ...) first_of(__VA_ARGS__),
#define GPUMON_NVML_OPTIONAL(member, ret, params, ...) first_of(__VA_ARGS__),
#include "nvml/nvml_entry_points.inc"
#undef GPUMON_NVML_REQUIRED
#undef GPUMON_NVML_OPTIONAL
  };
}

TEST(NvmlLibrary, MissingLibrarySaysWhatToDo) {
  LoadError error;
  EXPECT_EQ(NvmlLibrary::load("/nonexistent/libnvidia-ml.so.1", &error), nullptr);
  EXPECT_EQ(error.kind, LoadError::Kind::kLibraryNotFound);
  EXPECT_NE(error.message.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos)
      << error.message;
  EXPECT_NE(error.message.find("Is the NVIDIA driver installed?"), std::string::npos);
  EXPECT_NE(error.message.find("GPUMON_NVML_LIBRARY"), std::string::npos);
}

TEST(NvmlLibrary, LibraryWithoutRequiredEntryPointsIsRejectedByName) {
  LoadError error;
  EXPECT_EQ(NvmlLibrary::load(GPUMON_TEST_STUB_NVML_PATH, &error), nullptr);
  EXPECT_EQ(error.kind, LoadError::Kind::kMissingRequiredSymbol);
  EXPECT_NE(error.message.find(
                "lacks nvmlShutdown, nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2"),
            std::string::npos)
      << error.message;
  EXPECT_EQ(error.message.find("nvmlInit"), std::string::npos);  // found through its fallback
}

TEST(NvmlLibrary, EnvironmentVariableChoosesTheLibrary) {
  FakeScenario scenario("demo");
  LoadError error;
  auto lib = NvmlLibrary::load("", &error);
  ASSERT_NE(lib, nullptr) << error.message;
  EXPECT_EQ(lib->path(), kFakeLibrary);
  EXPECT_EQ(lib->simulated_scenario(), "demo");
}

TEST(NvmlLibrary, FakeExportsEveryListedNameAndNothingElse) {
  void* handle = dlopen(kFakeLibrary, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  for (const std::string& name : all_names()) {
    EXPECT_NE(dlsym(handle, name.c_str()), nullptr) << name;
  }
  for (const char* hook : {"gpumonFakeScenarioName", "gpumonFakeCallCount", "gpumonFakeResetCounts",
                           "gpumonFakeSetTime"}) {
    EXPECT_NE(dlsym(handle, hook), nullptr) << hook;
  }
  // Internals (and the static libraries linked in) stay hidden.
  EXPECT_EQ(dlsym(handle, "_ZN6gpumon4fake7Runtime3getEv"), nullptr);
  EXPECT_EQ(dlsym(handle,
                  "_ZN6gpumon4fake14parse_scenarioESt17basic_string_viewIcSt11char_traitsIcEES4_"),
            nullptr);
}

TEST(NvmlLibrary, ResolvesTheNewestNameOfEveryEntryPoint) {
  FakeScenario scenario("demo");
  LoadError error;
  auto lib = NvmlLibrary::load(kFakeLibrary, &error);
  ASSERT_NE(lib, nullptr) << error.message;
  const std::vector<std::string> preferred = preferred_names();
  ASSERT_EQ(lib->symbols().size(), preferred.size());
  for (std::size_t i = 0; i < preferred.size(); ++i) {
    EXPECT_EQ(lib->symbols()[i].symbol, preferred[i]) << lib->symbols()[i].member;
  }
  // _v3 with RunningProcessDetailList present: the driver-550+ 24-byte process layout.
  EXPECT_EQ(lib->process_info_layout(), ProcessInfoLayout::kV2);
  EXPECT_EQ(lib->error_string(NVML_ERROR_GPU_IS_LOST), "GPU is lost");
}

TEST(NvmlLibrary, ReturnCodeNames) {
  EXPECT_EQ(return_code_name(NVML_ERROR_LIB_RM_VERSION_MISMATCH), "LIB_RM_VERSION_MISMATCH");
  EXPECT_EQ(return_code_name(static_cast<nvmlReturn_t>(12345)), "UNKNOWN");
}

}  // namespace
}  // namespace gpumon::nvml
