# SPDX-License-Identifier: MIT
"""GPU load for side-by-side checks: bf16 matrix products, with short host-side pauses so the
utilization and clock readings move (none with "steady").
usage: python3 load.py SECONDS [HOLD_GIB] [steady]"""
import sys
import time

import torch

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 30
hold = torch.empty(int(float(sys.argv[2]) * 2**30) if len(sys.argv) > 2 else 0, dtype=torch.uint8, device="cuda")
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
print("load: ready", flush=True)
end = time.time() + seconds
step = 0
steady = len(sys.argv) > 3 and sys.argv[3] == "steady"
while time.time() < end:
    for _ in range(20):
        a = (a @ a).clamp_(-1, 1)
    torch.cuda.synchronize()
    step += 1
    if not steady and step % 10 == 0:
        time.sleep(0.05)  # a stall, like a slow data loader
print(f"load: done after {step} steps", flush=True)
