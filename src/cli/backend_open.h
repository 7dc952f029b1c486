// SPDX-License-Identifier: MIT
// Opening the GPUs for the snapshot and the live view, and the message when there are none to
// open.
#pragma once

#include <memory>
#include <string>

#include "cli/console.h"
#include "gpu/nvml_backend.h"
#include "node/node_log.h"

namespace gpumon::cli {

/// Exit status when NVML cannot be opened (no driver, unusable library, init failure).
constexpr int kExitNoGpu = 1;

/// The fake NVML library built next to `self_path` (build/fake-nvml/libnvidia-ml.so.1 beside
/// build/gpumon), or empty when there is none.
std::string fake_library_beside(const std::string& self_path);

/// "gpumon: no NVIDIA driver found (...)" plus how to try simulated GPUs; for other failures
/// "gpumon: <message>". Ends with a newline.
std::string open_failure_message(const NvmlOpenError& error, const std::string& self_path);

/// Opens NVML as NvmlBackend does (GPUMON_NVML_LIBRARY, else the driver's library). On failure
/// writes open_failure_message() to `console.err` and returns nullptr.
std::unique_ptr<NvmlBackend> open_backend(const Console& console, NvmlOpenError* error);

/// open_backend() for `record`, `agent` and `serve`: with a JSON log (--log-format json) the
/// failure is one "nvml" error line of that log (node/node_log.h) instead of text.
std::unique_ptr<NvmlBackend> open_backend_logged(const Console& console, const std::string& command,
                                                 node::LogFormat format);

}  // namespace gpumon::cli
