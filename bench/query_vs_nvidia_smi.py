#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CPU cost per sample: `gpumon query -lms 100` against one `nvidia-smi --query-gpu` call.

Arms, interleaved in blocks (../shared/MEASURING.md), CPU = user + sys of the child process:
  nvidia_smi          one `nvidia-smi --query-gpu=F --format=csv,noheader` call
  nvidia_smi_control  the same again (negative control: the noise floor)
  gpumon_oneshot      one `gpumon query` call (includes loading NVML and nvmlInit)
  gpumon_per_sample   the marginal cost of one more sample in `gpumon query -lms 100`:
                      (CPU of -c LONG  -  CPU of -c SHORT) / (LONG - SHORT)
Target: gpumon_per_sample <= nvidia_smi / 20.
Without nvidia-smi (CI, fake NVML) the nvidia-smi arms are skipped.
"""
import argparse
import json
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time

FIELDS = ("timestamp,index,utilization.gpu,utilization.memory,memory.used,memory.total,"
          "temperature.gpu,power.draw,clocks.sm,clocks.mem,clocks_event_reasons.active")


def child_cpu(cmd):
    """Runs cmd, returns (child CPU seconds, wall seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def bootstrap_ci(values, iterations=2000, seed=12345):
    rng = random.Random(seed)
    meds = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(iterations))
    return meds[int(0.025 * (iterations - 1))], meds[int(0.975 * (iterations - 1))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpumon", default="build-release/gpumon")
    ap.add_argument("--nvidia-smi", default="nvidia-smi")
    ap.add_argument("--blocks", type=int, default=20)
    ap.add_argument("--long", type=int, default=25, help="samples in the long loop")
    ap.add_argument("--short", type=int, default=5, help="samples in the short loop")
    ap.add_argument("--interval-ms", type=int, default=100)
    ap.add_argument("--fields", default=FIELDS)
    ap.add_argument("--out", help="write raw results as JSON here")
    a = ap.parse_args()
    if a.long <= a.short:
        ap.error("--long must be greater than --short")

    smi = shutil.which(a.nvidia_smi)
    q = [a.gpumon, "query", "--query-gpu=" + a.fields, "--format=csv,noheader"]
    arms = {
        "gpumon_oneshot": lambda: child_cpu(q)[0],
        "gpumon_per_sample": lambda: (
            child_cpu(q + ["-lms", str(a.interval_ms), "-c", str(a.long)])[0]
            - child_cpu(q + ["-lms", str(a.interval_ms), "-c", str(a.short)])[0]) / (a.long - a.short),
    }
    if smi:
        smi_cmd = [smi, "--query-gpu=" + a.fields, "--format=csv,noheader"]
        arms["nvidia_smi"] = lambda: child_cpu(smi_cmd)[0]
        arms["nvidia_smi_control"] = lambda: child_cpu(smi_cmd)[0]
    names = list(arms)
    for name in names:  # warm-up
        arms[name]()
    results = {name: [] for name in names}
    for b in range(a.blocks):
        for k in range(len(names)):  # rotate the order each block
            name = names[(k + b) % len(names)]
            results[name].append(arms[name]())

    print(f"blocks={a.blocks} fields={len(a.fields.split(','))} interval={a.interval_ms} ms")
    print(f"{'arm':22s} {'median CPU ms':>14s} {'95% CI':>22s}")
    for name in names:
        v = [x * 1e3 for x in results[name]]
        lo, hi = bootstrap_ci(v)
        print(f"{name:22s} {statistics.median(v):14.3f} [{lo:9.3f}, {hi:9.3f}]")
    summary = {}
    if smi:
        ratio = [g / s for g, s in zip(results["gpumon_per_sample"], results["nvidia_smi"]) if s > 0]
        control = [c / s for c, s in zip(results["nvidia_smi_control"], results["nvidia_smi"]) if s > 0]
        lo, hi = bootstrap_ci(ratio)
        clo, chi = bootstrap_ci(control)
        summary = {"per_sample_over_nvidia_smi": statistics.median(ratio), "ci": [lo, hi],
                   "control": statistics.median(control), "control_ci": [clo, chi]}
        print(f"gpumon per sample / nvidia-smi call: median {summary['per_sample_over_nvidia_smi']:.4f} "
              f"(1/{1 / max(summary['per_sample_over_nvidia_smi'], 1e-9):.0f}) 95% CI [{lo:.4f}, {hi:.4f}]  target <= 0.05")
        print(f"control / nvidia-smi: median {summary['control']:.3f} 95% CI [{clo:.3f}, {chi:.3f}]")
    else:
        print("nvidia-smi not found: its arms were skipped")
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"args": vars(a), "cpu_seconds": results, "summary": summary}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
