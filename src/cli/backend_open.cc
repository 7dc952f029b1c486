// SPDX-License-Identifier: MIT
#include "cli/backend_open.h"

#include <fmt/format.h>
#include <sys/stat.h>

namespace gpumon::cli {

std::string fake_library_beside(const std::string& self_path) {
  const std::size_t slash = self_path.rfind('/');
  if (slash == std::string::npos) return "";
  const std::string candidate = self_path.substr(0, slash) + "/fake-nvml/libnvidia-ml.so.1";
  struct stat st {};
  return ::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? candidate : "";
}

std::string open_failure_message(const NvmlOpenError& error, const std::string& self_path) {
  if (error.kind != NvmlOpenError::Kind::kNoDriver) {
    return fmt::format("gpumon: {}\n", error.message);
  }
  const std::string fake = fake_library_beside(self_path);
  const std::string try_it =
      fake.empty()
          ? "  GPUMON_NVML_LIBRARY=<build>/fake-nvml/libnvidia-ml.so.1 GPUMON_FAKE_SCENARIO=demo "
            "gpumon\n(or `bash scripts/live.sh` in a gpumon checkout)"
          : fmt::format("  GPUMON_NVML_LIBRARY={} GPUMON_FAKE_SCENARIO=demo {}", fake,
                        self_path.empty() ? "gpumon" : self_path);
  return fmt::format(
      "gpumon: no NVIDIA driver found ({})\n"
      "To try gpumon on simulated GPUs (gpumon's fake NVML, scenario \"demo\"):\n{}\n",
      error.message, try_it);
}

std::unique_ptr<NvmlBackend> open_backend(const Console& console, NvmlOpenError* error) {
  NvmlOpenError local;
  NvmlOpenError* e = error != nullptr ? error : &local;
  auto backend = NvmlBackend::open(NvmlOpenOptions{}, e);
  if (!backend) console.err << open_failure_message(*e, console.self_path);
  return backend;
}

std::unique_ptr<NvmlBackend> open_backend_logged(const Console& console, const std::string& command,
                                                 node::LogFormat format) {
  if (format == node::LogFormat::kText) return open_backend(console, nullptr);
  NvmlOpenError e;
  auto backend = NvmlBackend::open(NvmlOpenOptions{}, &e);
  if (!backend) {
    std::string message = open_failure_message(e, console.self_path);
    if (message.starts_with("gpumon: ")) message.erase(0, 8);
    while (!message.empty() && message.back() == '\n') message.pop_back();
    node::NodeLog(console.err, command, format).say("nvml", message, node::NodeLog::Level::kError);
  }
  return backend;
}

}  // namespace gpumon::cli
