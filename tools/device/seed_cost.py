# SPDX-License-Identifier: MIT
"""CPU per sample of the seed articles' monitor thread (GPUMonitor.get_stats for one GPU:
pynvml handle, utilization, temperature, and torch.cuda.memory_stats), at 10 Hz for S seconds,
read with thread_time() around each sample. With --nvml-only, the pynvml calls alone.
usage: python3 seed_cost.py SECONDS [--nvml-only]  -> one JSON line"""
import json
import sys
import threading
import time

import pynvml as nv
import torch

seconds = float(sys.argv[1])
nvml_only = "--nvml-only" in sys.argv
nv.nvmlInit()
torch.cuda.init()
torch.zeros(1, device="cuda")
cpu, n = 0.0, 0


def run():
    global cpu, n
    end = time.time() + seconds
    while time.time() < end:
        c = time.thread_time()
        h = nv.nvmlDeviceGetHandleByIndex(0)
        util = nv.nvmlDeviceGetUtilizationRates(h).gpu
        temp = nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)
        if not nvml_only:
            m = torch.cuda.memory_stats(0)
            _ = (util, temp, m.get("allocated_bytes.all.current", 0) // 2**20,
                 m.get("reserved_bytes.all.current", 0) // 2**20)
        cpu += time.thread_time() - c
        n += 1
        time.sleep(0.1)


t = threading.Thread(target=run)
t.start()
t.join()
print(json.dumps({"arm": "seed-nvml-only" if nvml_only else "seed", "samples": n,
                  "cpu_us_per_sample": 1e6 * cpu / n}))
