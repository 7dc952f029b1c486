// SPDX-License-Identifier: MIT
#include "cli/python_hooks.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

namespace gpumon::cli {
namespace {

bool has_bootstrap(const std::string& dir) {
  struct stat st {};
  return ::stat((dir + "/sitecustomize.py").c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string executable_dir() {
  std::vector<char> buf(4096);
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return {};
  const std::string exe(buf.data(), static_cast<std::size_t>(n));
  return exe.substr(0, exe.rfind('/'));
}

}  // namespace

std::string python_hooks_dir(std::string& why) {
  if (const char* env = std::getenv("GPUMON_PYTHON_DIR"); env != nullptr && *env != '\0') {
    const std::string dir = std::string(env) + "/gpumon/_bootstrap";
    if (has_bootstrap(dir)) return dir;
    why = "GPUMON_PYTHON_DIR=" + std::string(env) + " holds no gpumon/_bootstrap/sitecustomize.py";
    return {};
  }
  const std::string exe = executable_dir();
  for (const char* relative : {"/../python", "/../lib/gpumon/python"}) {
    const std::string dir = exe + relative + "/gpumon/_bootstrap";
    if (!exe.empty() && has_bootstrap(dir)) return dir;
  }
  why = "no gpumon Python package beside " + exe +
        " (set GPUMON_PYTHON_DIR to the folder holding it)";
  return {};
}

void enable_python_hooks(const std::string& dir) {
  const char* old = std::getenv("PYTHONPATH");
  const std::string path = old != nullptr && *old != '\0' ? dir + ":" + old : dir;
  ::setenv("PYTHONPATH", path.c_str(), 1);
  ::setenv("GPUMON_PYTHON_HOOKS", "1", 1);
}

}  // namespace gpumon::cli
