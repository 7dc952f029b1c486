# SPDX-License-Identifier: MIT
# Header-only dependencies from Debian packages (libcli11-dev, nlohmann-json3-dev, libfmt-dev),
# or from GPUMON_BUNDLED_HEADERS where those packages cannot be installed.
add_library(gpumon_deps INTERFACE)

find_package(nlohmann_json 3.10 QUIET)
find_package(CLI11 QUIET)
find_package(fmt QUIET)

if(nlohmann_json_FOUND AND CLI11_FOUND AND fmt_FOUND)
  target_link_libraries(gpumon_deps INTERFACE nlohmann_json::nlohmann_json CLI11::CLI11 fmt::fmt)
elseif(GPUMON_BUNDLED_HEADERS)
  message(STATUS "gpumon: using bundled headers from ${GPUMON_BUNDLED_HEADERS}")
  target_include_directories(gpumon_deps SYSTEM INTERFACE ${GPUMON_BUNDLED_HEADERS})
  target_compile_definitions(gpumon_deps INTERFACE FMT_HEADER_ONLY=1)
else()
  message(FATAL_ERROR
    "gpumon needs CLI11, nlohmann-json and fmt: run `sudo scripts/setup.sh` (Debian: "
    "apt-get install libcli11-dev nlohmann-json3-dev libfmt-dev), or pass "
    "-DGPUMON_BUNDLED_HEADERS=<folder> with CLI/, nlohmann/ and fmt/ inside.")
endif()
