# SPDX-License-Identifier: MIT
"""python -m gpumon SCRIPT [ARGS...] | -m MODULE [ARGS...]: runs a training script with gpumon's
zero-code hooks (gpumon/_auto.py), as `python SCRIPT ARGS` would run it; the steps go to the
node's agent (gpumon.start()'s defaults: GPUMON_AGENT_SOCKET, else the default socket, where an
agent is started if none listens). Under a launcher: `torchrun --nproc_per_node 8 -m gpumon
train.py`."""
import os
import runpy
import sys

USAGE = "usage: python -m gpumon SCRIPT [ARGS...] | python -m gpumon -m MODULE [ARGS...]"


def main(argv):
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    from gpumon import _auto
    _auto.install()
    if argv[0] == "-m":
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            return 2
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))  # as `python SCRIPT` has it
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
