# SPDX-License-Identifier: MIT
"""The `action` message (docs/python.md "Protocol"): one line of compact JSON telling the agent
that gpumon changed something in the training (the OOM guard's micro-batch size, the adaptive
loader's workers). Shared by the OOM guard and the adaptive loader; needs nothing but json.
"""

import json
import math
import re

MAX_LINE_BYTES = 4095  # the protocol's line limit
MAX_SUMMARY_CHARS = 400
_ACTION = re.compile(r"[a-z_]{1,64}")


def action_line(action, step, summary, **fields):
    """The action message as one line (no newline). `action` is the kind ([a-z_], at most 64
    characters; ValueError otherwise), `step` the step it applies from (None: left out),
    `summary` one sentence (cut to 400 characters); `fields` are the other members (reason,
    batch_size, micro_batch_size, evidence, ...), those that are None dropped. A line that would
    still pass 4095 bytes loses its evidence, then its summary."""
    if not isinstance(action, str) or not _ACTION.fullmatch(action):
        raise ValueError("action must be 1-64 characters of [a-z_], not %r" % (action,))
    message = {"type": "action", "action": action}
    if step is not None:
        message["step"] = int(step)
    if summary is not None:
        summary = str(summary)
        if len(summary) > MAX_SUMMARY_CHARS:
            summary = summary[:MAX_SUMMARY_CHARS - 3] + "..."
        message["summary"] = summary
    for name, value in fields.items():
        if isinstance(value, dict):
            value = {k: _finite(v) for k, v in value.items() if _finite(v) is not None}
        value = _finite(value)
        if value is not None:
            message[name] = value
    line = _dump(message)
    for name in ("evidence", "summary"):
        if len(line.encode("utf-8")) <= MAX_LINE_BYTES:
            break
        message.pop(name, None)
        line = _dump(message)
    return line


def _finite(value):
    """NaN and infinities have no JSON spelling: None (left out)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _dump(message):
    return json.dumps(message, separators=(",", ":"), ensure_ascii=True, default=str)
