# SPDX-License-Identifier: MIT
"""The `action` message: one line of compact JSON the OOM guard and the adaptive loader send
(with Monitor._send_now) each time they change something in the training process.

Fields (docs/python.md "Protocol"): type "action", `action` (the kind: oom_split, oom_merge,
oom_floor, loader_retuned, loader_limited, loader_prefetch), `step` (the step it applies from),
`summary` (one sentence, cut to 400 characters), `reason`, the state after the action
(integers: batch_size, micro_batch_size, num_workers, prefetch_factor, prefetch_depth, epoch,
and their previous_ values) and `evidence` (an object of the figures that decided it). Fields
that are None are left out; the line stays under the protocol's 4 KiB.
"""

import json

SUMMARY_CHARS = 400


def action_line(action, step, summary, **fields):
    """The `action` message as one line of compact JSON (no newline)."""
    if summary is not None and len(summary) > SUMMARY_CHARS:
        summary = summary[:SUMMARY_CHARS - 3] + "..."
    message = {"type": "action", "action": action, "step": step, "summary": summary}
    message.update(fields)
    return json.dumps({k: v for k, v in message.items() if v is not None},
                      separators=(",", ":"), ensure_ascii=True)
