// SPDX-License-Identifier: MIT
// The text of --help-query-gpu and --help-query-compute-apps, generated from the registries so
// that it cannot fall out of step with what the command accepts.
#pragma once

#include <string>

namespace gpumon::query {

std::string gpu_fields_help();
std::string app_fields_help();

}  // namespace gpumon::query
