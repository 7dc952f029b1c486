# SPDX-License-Identifier: MIT
"""Builds gpumon._gpumon (src/gpumon_module.cc and the agent client it wraps) for
`pip install ./python`; the metadata is in pyproject.toml. The sources are those of CMake's
gpumon_python target (python/CMakeLists.txt; src/agent/CMakeLists.txt: gpumon_agent_client;
src/client/CMakeLists.txt: the step clock and its messages)."""
import os

from pybind11.setup_helpers import ParallelCompile, Pybind11Extension
from setuptools import setup
from setuptools.command.build_py import build_py

# setuptools takes only paths relative to this folder (where pip runs it).
os.chdir(os.path.dirname(os.path.abspath(__file__)))
SRC = "../src"
if not (os.path.isfile(SRC + "/agent/agent_client.cc")
        and os.path.isfile("../include/gpumon/monitor.h")):
    raise SystemExit("gpumon: %s/agent or ../include is missing; install from a checkout of the "
                     "whole repository: pip install --no-build-isolation ./python"
                     % os.path.abspath(SRC))

ParallelCompile("GPUMON_BUILD_JOBS").install()  # the sources at once

# gpumon-hooks.pth, at the top of site-packages: Python runs its line at start-up. It imports
# nothing unless GPUMON_PYTHON_HOOKS=1, and then sets the zero-code hooks up (gpumon/_auto.py),
# so `GPUMON_PYTHON_HOOKS=1 python train.py` instruments an unchanged script.
PTH = ('import os; os.environ.get("GPUMON_PYTHON_HOOKS") == "1" and '
       '__import__("gpumon._auto")._auto.install()\n')


class BuildPyWithPth(build_py):
    def run(self):
        super().run()
        with open(os.path.join(self.build_lib, "gpumon-hooks.pth"), "w") as f:
            f.write(PTH)


setup(cmdclass={"build_py": BuildPyWithPth}, ext_modules=[
    Pybind11Extension(
        "gpumon._gpumon",
        ["src/gpumon_module.cc", "src/step_clock_binding.cc", "src/step_calls.cc",
         SRC + "/agent/agent_client.cc",
         SRC + "/agent/socket_path.cc", SRC + "/client/step_clock.cc",
         SRC + "/client/messages.cc", SRC + "/client/client_core.cc",
         SRC + "/client/agent_launcher.cc", SRC + "/gpu/pci_bus_id.cc"],
        include_dirs=[SRC, "../include", "src"],
        cxx_std=20,
        extra_compile_args=["-g0"],  # no debug info: a smaller module, built faster
        extra_link_args=["-pthread"],
    ),
])
