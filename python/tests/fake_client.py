# SPDX-License-Identifier: MIT
"""A stand-in for _gpumon.Client: the surface the Monitor uses, every line sent kept (each must
be valid JSON), and findings the test pushes as the agent would. Not a _gpumon.Client, so every
due hand-over runs the Monitor's Python housekeeping."""
import json


class FakeClient:
    def __init__(self):
        self.lines, self.seq, self.line = [], 0, ""

    def push(self, *findings):
        """The agent's next findings line."""
        self.seq += 1
        self.line = json.dumps({"type": "findings", "health_score": 80, "findings": findings})

    def actions(self):
        return [m for m in self.lines if m["type"] == "action"]

    def receive(self):
        pass

    def findings_seq(self):
        return self.seq

    def findings_line(self):
        return self.line

    def send(self, line):
        self.lines.append(json.loads(line))
        return True

    def disconnects(self):
        return 0

    def flush(self):
        return True

    def close(self, timeout_s):
        pass

    def stats(self):
        return {}


class FakeEvent:
    """torch.cuda.Event for the step clock's GPU timer: never done, so never read."""

    def __init__(self, enable_timing):
        pass

    def record(self):
        pass

    def query(self):
        return False
