# SPDX-License-Identifier: MIT
"""Seed 001's `get_gpu_info()` (../shared/seeds/001_*.txt), copied as the article writes it with
only the command changed from `nvidia-smi` to `gpumon query`, runs against the fake NVML: the
nvidia-smi-shaped JSON of `--format=json` gives it the `gpu` list, `product_name`, nested
`temperature`/`utilization`/`memory` and memory in MB. Standard library only.

usage: seed_get_gpu_info_test.py GPUMON FAKE_LIBRARY SCENARIO_DIR   (exit 77: skipped)
"""

import contextlib
import io
import os
import re
import sys

GPUMON, FAKE, SCENARIOS = sys.argv[1:4]


# --- the article's function; only "nvidia-smi" became GPUMON, "query" ---
import subprocess
import json

def get_gpu_info():
    cmd = [GPUMON, "query", "--query-gpu=index,name,temperature.gpu,utilization.gpu,memory.used,memory.total", "--format=json"]
    result = subprocess.run(cmd, stdout=subprocess.PIPE, check=True)
    gpu_data = json.loads(result.stdout)
    for gpu in gpu_data['gpu']:
        print(f"GPU {gpu['index']} ({gpu['product_name']}):")
        print(f" Temp: {gpu['temperature']['gpu']}°C")
        print(f" GPU Util: {gpu['utilization']['gpu']}%")
        print(f" Memory: {gpu['memory']['used']}MB / {gpu['memory']['total']}MB")
# --- end of the article's function ---


def main():
    if not (os.access(GPUMON, os.X_OK) and os.path.exists(FAKE)):
        print("skip: gpumon or the fake NVML not built")
        return 77
    os.environ.update(GPUMON_NVML_LIBRARY=FAKE,
                      GPUMON_FAKE_SCENARIO=os.path.join(SCENARIOS, "demo.json"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        get_gpu_info()
    text = out.getvalue()
    print(text, end="")
    # The same GPUs and values as nvidia-smi's CSV form of the same query.
    csv = subprocess.run([GPUMON, "query", "--query-gpu=index,name,memory.total",
                          "--format=csv,noheader,nounits"], stdout=subprocess.PIPE, text=True,
                         check=True).stdout.splitlines()
    blocks = re.findall(r"GPU (\d+) \((.+)\):\n Temp: (\d+)°C\n GPU Util: (\d+)%\n"
                        r" Memory: (\d+)MB / (\d+)MB\n", text)
    if len(blocks) != len(csv) or not csv:
        print("FAIL: %d GPU blocks in the article's output, %d GPUs in CSV" % (len(blocks), len(csv)))
        return 1
    for block, row in zip(blocks, csv):
        index, name, total = [c.strip() for c in row.split(",")]
        if (block[0], block[1], block[5]) != (index, name, total):
            print("FAIL: article's %s differs from CSV's %s" % (block, row))
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
