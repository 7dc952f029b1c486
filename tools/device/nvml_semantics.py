# SPDX-License-Identifier: MIT
"""Checks on a real GPU what nvml.h leaves open, with pynvml (nvidia-ml-py), and prints JSON:
- nvmlDeviceGetSamples: order of the samples, spacing, units (power in mW?) against
  nvmlDeviceGetPowerUsage, how much history the buffers keep;
- nvmlDeviceGetPcieThroughput: is "KB" 1000 or 1024 bytes? Compared with a measured pinned
  host-to-device copy rate;
- nvmlDeviceGetProcessUtilization: timestamps (us since 1970?) and values under load.
usage: python3 nvml_semantics.py OUT.json
"""
import json
import statistics
import sys
import threading
import time

import pynvml as nv
import torch

nv.nvmlInit()
h = nv.nvmlDeviceGetHandleByIndex(0)
out = {"driver": nv.nvmlSystemGetDriverVersion(), "gpu": nv.nvmlDeviceGetName(h)}


def sample_list(kind):
    try:
        vtype, samples = nv.nvmlDeviceGetSamples(h, kind, 0)
    except nv.NVMLError as e:
        return {"error": str(e)}
    field = {0: "dVal", 1: "uiVal", 2: "ulVal", 3: "ullVal", 4: "sllVal"}.get(vtype, "uiVal")
    ts = [s.timeStamp for s in samples]
    vals = [getattr(s.sampleValue, field) for s in samples]
    gaps = [b - a for a, b in zip(ts, ts[1:])]
    return {"value_type": vtype, "count": len(samples), "first_ts": ts[:3], "last_ts": ts[-3:],
            "increasing": all(g > 0 for g in gaps), "median_gap_us": statistics.median(gaps) if gaps else None,
            "span_s": (ts[-1] - ts[0]) / 1e6 if len(ts) > 1 else 0,
            "now_minus_last_us": int(time.time() * 1e6) - ts[-1] if ts else None,
            "values_first": vals[:5], "values_mean": statistics.fmean(vals) if vals else None}


# A load so the buffers and counters move.
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
stop = threading.Event()


def gemm():
    global a
    while not stop.is_set():
        for _ in range(10):
            a = (a @ a).clamp_(-1, 1)
        torch.cuda.synchronize()


t = threading.Thread(target=gemm)
t.start()
time.sleep(3)
out["power_usage_mw"] = nv.nvmlDeviceGetPowerUsage(h)
out["samples_power"] = sample_list(nv.NVML_TOTAL_POWER_SAMPLES)
out["power_usage_mw_after"] = nv.nvmlDeviceGetPowerUsage(h)
out["samples_gpu_util"] = sample_list(nv.NVML_GPU_UTILIZATION_SAMPLES)
out["samples_mem_util"] = sample_list(nv.NVML_MEMORY_UTILIZATION_SAMPLES)
try:
    pu = nv.nvmlDeviceGetProcessUtilization(h, int(time.time() * 1e6) - 2_000_000)
    out["process_utilization"] = [{"pid": p.pid, "ts": p.timeStamp, "sm": p.smUtil, "mem": p.memUtil}
                                  for p in pu][:8]
    out["process_utilization_now_us"] = int(time.time() * 1e6)
except nv.NVMLError as e:
    out["process_utilization"] = str(e)
stop.set()
t.join()

# PCIe: pinned host-to-device copies at full speed, NVML's RX counter read meanwhile.
host = torch.empty(1 << 30, dtype=torch.uint8).pin_memory()
dev = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
copied = [0, 0.0]


def copy():
    t0 = time.perf_counter()
    while not stop.is_set():
        dev.copy_(host, non_blocking=True)
        torch.cuda.synchronize()
        copied[0] += host.numel()
    copied[1] = time.perf_counter() - t0


stop.clear()
t = threading.Thread(target=copy)
t.start()
time.sleep(0.5)
rx, tx = [], []
end = time.time() + 2.5
while time.time() < end:
    rx.append(nv.nvmlDeviceGetPcieThroughput(h, nv.NVML_PCIE_UTIL_RX_BYTES))
    tx.append(nv.nvmlDeviceGetPcieThroughput(h, nv.NVML_PCIE_UTIL_TX_BYTES))
stop.set()
t.join()
measured = copied[0] / copied[1]
rx_med = statistics.median(rx)
out["pcie"] = {"copy_bytes_per_s": measured, "nvml_rx_median": rx_med, "nvml_tx_median": statistics.median(tx),
               "reads": len(rx), "rx_x1000_over_measured": rx_med * 1000 / measured,
               "rx_x1024_over_measured": rx_med * 1024 / measured,
               "pcie_link": [nv.nvmlDeviceGetCurrPcieLinkGeneration(h), nv.nvmlDeviceGetCurrPcieLinkWidth(h)]}
with open(sys.argv[1], "w") as f:
    json.dump(out, f, indent=1)
print(json.dumps(out, indent=1))
