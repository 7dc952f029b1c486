// SPDX-License-Identifier: MIT
#include "cli/version.h"

#ifndef GPUMON_VERSION
#error "GPUMON_VERSION is defined by src/cli/CMakeLists.txt"
#endif
#ifndef GPUMON_GIT_DESCRIBE
#define GPUMON_GIT_DESCRIBE ""
#endif
#ifndef GPUMON_BUILD_TYPE
#define GPUMON_BUILD_TYPE ""
#endif

namespace gpumon::cli {

std::string version_number() {
  return GPUMON_VERSION;
}

std::string version_revision() {
  return GPUMON_GIT_DESCRIBE;
}

std::string version_text() {
  const std::string git = GPUMON_GIT_DESCRIBE, build = GPUMON_BUILD_TYPE;
  std::string about = git.empty() ? "" : "git " + git;
  if (!build.empty()) about += (about.empty() ? "" : ", ") + build + " build";
  return "gpumon " + version_number() + (about.empty() ? "" : " (" + about + ")");
}

}  // namespace gpumon::cli
