# SPDX-License-Identifier: MIT
# find_package(gpumon CONFIG): the C++ client, gpumon::client (include <gpumon/monitor.h>).
include(CMakeFindDependencyMacro)
find_dependency(Threads)
include(${CMAKE_CURRENT_LIST_DIR}/gpumonTargets.cmake)
