# SPDX-License-Identifier: MIT
"""A PyTorch process that holds 3 GiB of GPU memory and keeps the SMs busy with bf16 matrix
products for SECONDS (default 8): the process nvidia-smi's process views (pmon,
--query-compute-apps) and gpumon's are compared beside. Used by the tools/device/probe_*.sh
scripts.   usage: python3 busy_gpu.py [SECONDS]"""
import sys
import time

import torch

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 8.0
held = torch.empty(3 * 1024**3, dtype=torch.uint8, device="cuda")
y = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
start = time.time()
while time.time() - start < seconds:
    (y @ y).sum().item()
