# SPDX-License-Identifier: MIT
"""`pip install .` from the repository's root (metadata in pyproject.toml): builds

- gpumon._gpumon, the module's C++ part (python/src/gpumon_module.cc and the agent client it
  wraps: the sources of CMake's gpumon_python target, python/CMakeLists.txt), and
- the gpumon executable, with CMake (a Release build of its one target in build-pip/cmake),
  packaged as gpumon/bin/gpumon; the `gpumon` command pip puts in the environment's bin/ runs it
  (gpumon/_cli.py), and the module starts its agent from it.

GPUMON_CMAKE_BUILD_DIR names a configured CMake build folder to build the executable in instead
(only brought up to date: how the tests install without building everything again). An sdist
carries what the CMake build needs (MANIFEST.in). GPUMON_BUILD_JOBS: parallel compile jobs
(default: the CPUs)."""
import os
import shutil
import subprocess

from pybind11.setup_helpers import ParallelCompile, Pybind11Extension
from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

# setuptools takes only paths relative to this folder (where pip runs it).
ROOT = os.path.dirname(os.path.abspath(__file__))
os.chdir(ROOT)
if not (os.path.isfile("src/agent/agent_client.cc") and os.path.isfile("CMakeLists.txt")):
    raise SystemExit("gpumon: %s is not a whole gpumon checkout (src/ or CMakeLists.txt is "
                     "missing); pip install from the repository's root: pip install ." % ROOT)

if shutil.which("cmake") is None:  # before minutes of compiling the module
    raise SystemExit("gpumon: cmake is not installed; it builds the gpumon executable "
                     "(bash scripts/setup.sh installs what the build needs)")
BUILD = os.path.join(ROOT, "build-pip")
os.makedirs(BUILD, exist_ok=True)  # setuptools' egg_info wants its folder to exist
JOBS = os.environ.get("GPUMON_BUILD_JOBS") or str(os.cpu_count() or 1)
ParallelCompile("GPUMON_BUILD_JOBS").install()  # the module's sources at once

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


def run(cmd):
    print("gpumon: " + " ".join(cmd), flush=True)
    try:
        subprocess.run(cmd, check=True)
    except subprocess.CalledProcessError as e:
        raise SystemExit("gpumon: %s failed (exit %d); its output is above"
                         % (" ".join(cmd), e.returncode))


class BuildExtWithExecutable(build_ext):
    """The module's extension, then the executable beside the package's files."""

    def run(self):
        super().run()
        build = os.environ.get("GPUMON_CMAKE_BUILD_DIR")
        if not build:
            # Configured again each time (quick when nothing changed): a configure that failed,
            # for a missing library, left a cache but no build files.
            build = os.path.join(BUILD, "cmake")
            run(["cmake", "-S", ROOT, "-B", build, "-G", "Ninja" if shutil.which("ninja")
                 else "Unix Makefiles", "-DCMAKE_BUILD_TYPE=Release", "-DGPUMON_BUILD_TESTS=OFF"])
        run(["cmake", "--build", build, "--target", "gpumon", "-j", JOBS])
        # An editable install (pip install -e .) imports the package from python/ itself.
        dest = os.path.join("python" if self.inplace else self.build_lib, "gpumon", "bin")
        os.makedirs(dest, exist_ok=True)
        shutil.copy2(os.path.join(build, "gpumon"), os.path.join(dest, "gpumon"))


setup(cmdclass={"build_py": BuildPyWithPth, "build_ext": BuildExtWithExecutable},
      # setuptools' own build/ would land in CMake's dev build folder
      options={"build": {"build_base": os.path.join(BUILD, "setuptools")},
               "egg_info": {"egg_base": BUILD}},
      ext_modules=[
    Pybind11Extension(
        "gpumon._gpumon",
        ["python/src/gpumon_module.cc", "python/src/step_clock_binding.cc",
         "python/src/step_calls.cc", "src/agent/agent_client.cc", "src/agent/socket_path.cc",
         "src/client/step_clock.cc", "src/client/messages.cc", "src/client/client_core.cc",
         "src/client/agent_launcher.cc", "src/gpu/pci_bus_id.cc", "src/job/job_identity.cc"],
        include_dirs=["src", "include", "python/src"],
        cxx_std=20,
        extra_compile_args=["-g0"],  # no debug info: a smaller module, built faster
        extra_link_args=["-pthread"],
    ),
])
