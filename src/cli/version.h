// SPDX-License-Identifier: MIT
// gpumon's version: the CMake project version, plus `git describe` taken when the build was
// configured (empty outside a git checkout).
#pragma once

#include <string>

namespace gpumon::cli {

std::string version_number();  ///< "0.1.0"
/// "gpumon 0.1.0 (git f436c6b-dirty, Release build)": the version, the commit (with -dirty
/// when built from a changed tree) and CMAKE_BUILD_TYPE.
std::string version_text();
std::string version_revision();  ///< "f436c6b-dirty" (git describe), or "" outside git

}  // namespace gpumon::cli
