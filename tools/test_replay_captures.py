#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Replays every captured real-GPU scenario (testdata/scenarios/*-capture.json) through the fake
NVML and checks that `gpumon query` reports what the real GPU reported at that moment.

usage: test_replay_captures.py --gpumon build/gpumon --library build/fake-nvml/libnvidia-ml.so.1
"""
import argparse
import glob
import json
import os
import subprocess
import sys

# query field -> (scenario field, scale from the scenario's unit to the query's JSON unit)
FIELDS = {
    "utilization.gpu": ("utilization_gpu_pct", 1),
    "memory.used": ("memory_used_bytes", 1),
    "temperature.gpu": ("temperature_gpu_c", 1),
    "power.draw": ("power_draw_mw", 1e-3),
    "clocks.current.sm": ("sm_clock_mhz", 1),
}
OFFSETS_S = (2.0, 11.0, 23.0)


def candidates(series, t, slack=0.6):
    """Values a 'hold' series takes in [t, t + slack] (the query reads a moment after init)."""
    if isinstance(series, (int, float)):
        return {series}
    if "constant" in series:
        return {series["constant"]}
    pts = series["points"]["values"]
    if series["points"].get("repeat_s"):
        t = t % series["points"]["repeat_s"]
    held = [v for (x, v) in pts if x <= t]
    out = {held[-1]} if held else set()
    out |= {v for (x, v) in pts if t < x <= t + slack}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpumon", required=True)
    ap.add_argument("--library", required=True)
    ap.add_argument("--scenarios", default=os.path.join(os.path.dirname(__file__), "..", "testdata", "scenarios"))
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.scenarios, "*-capture.json")))
    if not files:
        print("no captured scenarios found", file=sys.stderr)
        return 1
    passed = failed = 0
    for path in files:
        scenario = json.load(open(path))
        fields = scenario["devices"][0]["fields"]
        for t in OFFSETS_S:
            env = dict(os.environ, GPUMON_NVML_LIBRARY=a.library, GPUMON_FAKE_SCENARIO=path,
                       GPUMON_FAKE_TIME_OFFSET_S=str(t))
            out = subprocess.run([a.gpumon, "query", "--query-gpu=index,name," + ",".join(FIELDS),
                                  "--format=json-flat", "-i", "0"], capture_output=True, text=True, env=env)
            if out.returncode != 0:
                print(f"FAIL {os.path.basename(path)} t={t}: exit {out.returncode}: {out.stderr}")
                failed += 1
                continue
            row = json.loads(out.stdout)["gpus"][0]
            for qf, (sf, scale) in FIELDS.items():
                if sf not in fields:
                    continue
                want = {round(v * scale, 3) for v in candidates(fields[sf], t)}
                got = row.get(qf)
                got = None if got is None else round(got, 3)
                if got in want:
                    passed += 1
                else:
                    failed += 1
                    print(f"FAIL {os.path.basename(path)} t={t} {qf}: gpumon {got}, capture {sorted(want)}")
            if row.get("name") != scenario["devices"][0].get("name"):
                failed += 1
                print(f"FAIL {os.path.basename(path)}: name {row.get('name')!r}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
