# SPDX-License-Identifier: MIT
add_library(gpumon_warnings INTERFACE)
target_compile_options(gpumon_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Wunused -Woverloaded-virtual -Wnull-dereference -Wformat=2 -Wimplicit-fallthrough)
if(CMAKE_BUILD_TYPE STREQUAL "Debug")
  target_compile_definitions(gpumon_warnings INTERFACE _GLIBCXX_ASSERTIONS)
endif()
