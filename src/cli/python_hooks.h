// SPDX-License-Identifier: MIT
// `gpumon record -- CMD`'s zero-code instrumentation (docs/python.md, "Without changing the
// script"): every Python that CMD starts, the ranks of a launcher included, loads gpumon's hooks
// at start-up through a sitecustomize module (python/gpumon/_bootstrap/) put first on its
// PYTHONPATH. A command that is not Python ignores both variables.
//
// Thread-safety: call before starting the command, from the command's thread (it sets the
// environment).
#pragma once

#include <string>

namespace gpumon::cli {

/// The _bootstrap folder of the gpumon Python package: GPUMON_PYTHON_DIR/gpumon/_bootstrap
/// when set, else beside this executable (<exe>/../python, a build tree; <exe>/../lib/gpumon/
/// python, an installation). "" and `why` when none holds sitecustomize.py.
std::string python_hooks_dir(std::string& why);

/// Puts `dir` first on PYTHONPATH and sets GPUMON_PYTHON_HOOKS=1 for the children to come.
void enable_python_hooks(const std::string& dir);

}  // namespace gpumon::cli
