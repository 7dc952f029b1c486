// SPDX-License-Identifier: MIT
// Test-only: runs the real consumers of /metrics over a body: `promtool check metrics` (the
// linter node_exporter's CI uses) and the Python client's parser. Header-only.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

namespace gpumon::exporter::testing {

struct CommandResult {
  int exit_code = -1;
  std::string output;  ///< stdout and stderr together
};

inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

/// A file holding `text`, removed with the object.
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    static int counter = 0;
    path_ =
        (std::filesystem::temp_directory_path() / ("gpumon-exporter-" + std::to_string(getpid()) +
                                                   "-" + std::to_string(counter++) + ".prom"))
            .string();
    std::ofstream(path_, std::ios::binary) << text;
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline bool have_promtool() {
  return run_command("command -v promtool").exit_code == 0;
}

/// `promtool check metrics < body`: the result (empty output and exit 0 when clean).
inline CommandResult promtool_check(const std::string& body) {
  TempFile file(body);
  return run_command("promtool check metrics < '" + file.path() + "'");
}

/// A Python that can import prometheus_client (the Debian one when pyenv shadows it).
inline std::optional<std::string> python_with_client() {
  for (const char* py : {"python3", "/usr/bin/python3"}) {
    if (run_command(std::string(py) + " -c 'import prometheus_client.parser'").exit_code == 0) {
      return std::string(py);
    }
  }
  return std::nullopt;
}

/// Parses `body` with prometheus_client; output is check_exposition.py's JSON summary.
inline CommandResult python_parse(const std::string& python, const std::string& body) {
  TempFile file(body);
  return run_command(python + " '" + GPUMON_TEST_EXPORTER_CHECK + "' '" + file.path() + "'");
}

}  // namespace gpumon::exporter::testing
