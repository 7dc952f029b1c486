#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Replays a recording made by `gpumon record --interval 100` on an H200 under a bf16 GEMM load
(testdata/recordings/h200-gemm-10hz.gpumon, 2026-11-29, driver 580.159.04): `gpumon export`
must read it back with what the real GPU reported - GPM SM activity near 96 %, tensor pipe
near 89 % over 1 s windows, the driver buffer's 20 ms power peaks above the 1 s average,
slow metrics on their own ticks - so format or reader changes cannot silently break real data.
usage: test_real_recording.py --gpumon PATH [--recording PATH]"""
import argparse
import csv
import io
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("--gpumon", required=True)
ap.add_argument("--recording", default=os.path.join(here, "..", "testdata", "recordings", "h200-gemm-10hz.gpumon"))
args = ap.parse_args()

text = subprocess.run([args.gpumon, "export", args.recording, "--format", "csv"], check=True,
                      capture_output=True, text=True).stdout
rows = list(csv.DictReader(io.StringIO(text)))
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def values(col):
    return [float(r[col]) for r in rows if r[col] != ""]


check(len(rows) == 344, f"344 ticks of GPU 0, got {len(rows)}")
sm = values("sm_active_ratio [ratio]")
tensor = values("tensor_active_ratio [ratio]")
window = values("gpm_window_s [s]")
check(len(sm) >= 30 and all(0.95 <= v <= 0.97 for v in sm), f"GPM SM active 0.95-0.97 every second: {sm[:5]}")
check(all(0.88 <= v <= 0.90 for v in tensor), f"tensor active 0.88-0.90: {tensor[:5]}")
check(all(0.95 <= v <= 1.05 for v in window), f"GPM windows of about 1 s: {window[:5]}")
power = values("power_draw_w [W]")
peaks = values("power_max_w [W]")
check(len(power) == 344 and 600 < min(power) and max(power) < 640, "1 s average power 600-640 W every tick")
check(len(peaks) >= 30 and max(peaks) > max(power) + 50, "a 20 ms power peak well above the 1 s average")
util = values("utilization_gpu_pct [%]")
check(min(util) >= 98, "utilization 98-100 % under the GEMM load")
check(len(values("energy_j [J]")) < 50, "energy only on the ticks that read it")
check(all(r["lost"] == "0" for r in rows), "never lost")
if failures:
    print("real H200 recording replay FAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print(f"real H200 recording: {len(rows)} ticks, SM active {min(sm):.3f}-{max(sm):.3f}, "
      f"power peaks up to {max(peaks):.0f} W over a {max(power):.0f} W average")
