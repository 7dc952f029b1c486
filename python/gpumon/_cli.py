# SPDX-License-Identifier: MIT
"""The `gpumon` command of a pip install: runs the gpumon executable installed with this package
(gpumon/bin/gpumon, built by setup.py) with the same arguments, in place of this process, so
signals, exit status and the terminal are the executable's own."""
import os
import sys


def installed_binary():
    """This install's gpumon executable, or None (a checkout's python/ on sys.path has none)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "gpumon")
    return path if os.access(path, os.X_OK) else None


def main():
    binary = installed_binary()
    if binary is None:
        print("gpumon: this install of the gpumon package has no executable (%s); reinstall "
              "from the repository's root: pip install ." % os.path.dirname(__file__),
              file=sys.stderr)
        return 127
    os.execv(binary, [binary] + sys.argv[1:])
