# SPDX-License-Identifier: MIT
"""What the Python benchmarks share: an agent of their own to send steps to, a Monitor connected
to it, and their output."""
import contextlib
import json
import os
import subprocess
import sys
import time


class Agent:
    """`command` (a `gpumon agent` command line listening on `socket_path`) as a process, from
    start() until it listens to stop(); `cpus` pins it. The log goes to `log` (a file)."""

    def __init__(self, command, socket_path, log=None, cpus=None):
        self.socket_path = socket_path
        self._log = log
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=log or subprocess.DEVNULL,
            preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)

    def wait_listening(self, timeout=10.0):
        """Returns once the socket exists; exits the benchmark when it does not come."""
        deadline = time.time() + timeout
        while (not os.path.exists(self.socket_path) and time.time() < deadline
               and self.process.poll() is None):
            time.sleep(0.05)
        if not os.path.exists(self.socket_path):
            said = ""
            if self._log is not None:
                self._log.seek(0)
                said = ": " + self._log.read()[-500:]
            sys.exit("the agent did not listen" + said)

    def stop(self):
        self.process.terminate()
        self.process.wait(10)

    @contextlib.contextmanager
    def monitor(self, **start_kwargs):
        """Once the agent listens, a gpumon Monitor sending to it (gpumon.start's other
        arguments in start_kwargs; the benchmark exits when it is not active). The Monitor is
        closed when the block ends without an error, and the agent stopped in any case."""
        try:
            self.wait_listening()
            import gpumon
            mon = gpumon.start(socket_path=self.socket_path, start_agent=False, **start_kwargs)
            if not mon.active:
                sys.exit("gpumon is not active: nothing to measure")
            yield mon
            mon.close()
        finally:
            self.stop()


def emit(out, path=None):
    """Prints the result as JSON and, given a path, writes it there too."""
    text = json.dumps(out, indent=1)
    print(text)
    if path:
        with open(path, "w") as f:
            f.write(text + "\n")
