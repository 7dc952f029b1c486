#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The standing cost of `gpumon serve` on a node: the fake NVML's `demo` scenario (8 H200s)
sampled every second, 8 training ranks attached to its agent socket, each sending STEP_HZ steps
a second with a job's labels, and /metrics scraped once a second as Prometheus would. After a
warm-up, the serve process's CPU time over the window (utime + stime from /proc) as a share of
one core, and its RSS and peak RSS. Bar: under 1 % of a core and 50 MB (docs/PERFORMANCE.md).

usage: bench/serve_cost.py [--gpumon build-release/gpumon]
           [--fake-nvml build-release/fake-nvml/libnvidia-ml.so.1] [--seconds 60] [--warmup 10]
           [--ranks 8] [--step-hz 10]
Prints one JSON line; exits 0 when under the bar, 1 when not."""
import argparse
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src", "cli"))
from serve_test_support import Rank, Serve  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def status_kb(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gpumon", default=os.path.join(HERE, "..", "build-release", "gpumon"))
    p.add_argument("--fake-nvml",
                   default=os.path.join(HERE, "..", "build-release", "fake-nvml",
                                        "libnvidia-ml.so.1"))
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--warmup", type=float, default=10)
    p.add_argument("--ranks", type=int, default=8)
    p.add_argument("--step-hz", type=float, default=10)
    a = p.parse_args()

    env = dict(os.environ, GPUMON_NVML_LIBRARY=a.fake_nvml, GPUMON_FAKE_SCENARIO="demo")
    buses = subprocess.run([a.gpumon, "query", "--query-gpu=pci.bus_id", "--format=csv,noheader"],
                           env=env, capture_output=True, text=True, check=True).stdout.split()
    serve = Serve(a.gpumon, a.fake_nvml, "demo", ["--interval", "1000"])
    stop = threading.Event()
    errors = []
    try:
        port = serve.wait_listening()
        ranks = [Rank(serve.agent_socket, 50000 + r, r, local_rank=r, world_size=a.ranks,
                      pci_bus_id=buses[r % len(buses)],
                      job={"id": "bench-job", "id_source": "gpumon"})
                 for r in range(a.ranks)]

        def steps():
            period = 1 / a.step_hz
            nxt = time.monotonic()
            while not stop.is_set():
                for r in ranks:
                    r.step(cpu_s=period, data_wait_s=period / 10, gpu_s=period * 0.8)
                nxt += period
                stop.wait(max(0, nxt - time.monotonic()))

        def scrape():
            nxt = time.monotonic()
            while not stop.is_set():
                try:
                    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port,
                                                timeout=10) as r:
                        r.read()
                except OSError as e:
                    errors.append(str(e))
                nxt += 1
                stop.wait(max(0, nxt - time.monotonic()))

        workers = [threading.Thread(target=steps), threading.Thread(target=scrape)]
        for w in workers:
            w.start()
        time.sleep(a.warmup)
        pid = serve.proc.pid
        c0, t0 = cpu_s(pid), time.monotonic()
        time.sleep(a.seconds)
        c1, t1 = cpu_s(pid), time.monotonic()
        rss, hwm = status_kb(pid, "VmRSS"), status_kb(pid, "VmHWM")
        stop.set()
        for w in workers:
            w.join()
        for r in ranks:
            r.bye()
    finally:
        stop.set()
        serve.stop()
    share = (c1 - c0) / (t1 - t0)
    out = {"gpus": 8, "ranks": a.ranks, "step_hz": a.step_hz, "seconds": round(t1 - t0, 1),
           "cpu_pct_of_one_core": round(100 * share, 3), "rss_mb": round(rss / 1024, 1),
           "peak_rss_mb": round(hwm / 1024, 1), "scrape_errors": len(errors)}
    print(json.dumps(out))
    return 0 if share < 0.01 and hwm < 50 * 1024 and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
