#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End to end: Debian's real Prometheus scrapes `gpumon serve --compat dcgm`, and the queries
users of dcgm-exporter already have return data.

serve plays the fake NVML's `xid` scenario (2 H200s; XID 94 on GPU 1 at 8 s, with an
uncorrected ECC error and a row remap pending a reset) at --interval 200 with --compat dcgm and
nothing else, so DCGM's conventions are on by default (UUID label, PCIe fields). Checked through
Prometheus's HTTP API:
  - every panel query and template variable of dcgm-exporter's Grafana dashboard
    (grafana/dcgm-exporter-dashboard.json, grafana.com 12239), written out below;
  - the alert patterns its users write: XIDs by err_code and by driver version and message,
    remapped rows, row-remap failure, PCIe replays, temperature; the ones whose condition holds
    in the scenario return data, the others run;
  - dcgm-exporter's types (counters without _total) in /api/v1/metadata, FB in whole MiB that
    add up to the board's memory, the UUID and DCGM_FI_DRIVER_VERSION labels.

  serve_dcgm_e2e_test.py --gpumon build/gpumon --fake-nvml build/fake-nvml/libnvidia-ml.so.1
Exit 0 pass, 1 fail, 77 skipped (no `prometheus` binary). About 20 s.
"""

import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_prometheus_e2e_test import Prometheus, stop_all  # noqa: E402
from serve_test_support import SKIP, Serve, check, prometheus_test_main  # noqa: E402

ALL = 'instance=~".*", gpu=~".*"'  # the dashboard's $instance and $gpu, set to All

# dcgm-exporter's dashboard: each panel's query, and the metric its variables list labels of.
DASHBOARD = [
    ("GPU Temperature", "DCGM_FI_DEV_GPU_TEMP{%s}" % ALL),
    ("GPU Avg. Temp", "avg(DCGM_FI_DEV_GPU_TEMP{%s})" % ALL),
    ("GPU Power Usage", "DCGM_FI_DEV_POWER_USAGE{%s}" % ALL),
    ("GPU Power Total", "sum(DCGM_FI_DEV_POWER_USAGE{%s})" % ALL),
    ("GPU SM Clocks", "DCGM_FI_DEV_SM_CLOCK{%s} * 1000000" % ALL),
    ("GPU Utilization", "DCGM_FI_DEV_GPU_UTIL{%s}" % ALL),
    ("Tensor Core Utilization", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{%s}" % ALL),
    ("GPU Framebuffer Mem Used", "DCGM_FI_DEV_FB_USED{%s}" % ALL),
    ("variable instance", "DCGM_FI_DEV_GPU_TEMP"),
    ("variable gpu", 'DCGM_FI_DEV_GPU_TEMP{instance=~".*"}'),
]

# Alert patterns written for dcgm-exporter: (name, expression, returns data in this scenario).
ALERTS = [
    ("any XID", 'DCGM_FI_DEV_XID_ERRORS{err_code!="0"} > 0', True),
    ("XID needing a reset", 'DCGM_FI_DEV_XID_ERRORS{err_code=~"48|63|64|74|79|92|94|95"} > 0',
     True),
    ("XIDs by driver and message",
     "count by (DCGM_FI_DRIVER_VERSION, err_msg) (DCGM_FI_DEV_XID_ERRORS > 0)", True),
    ("uncorrectable remapped rows", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS > 0", True),
    ("correctable remapped rows", "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS > 100", False),
    ("row remap failure", "DCGM_FI_DEV_ROW_REMAP_FAILURE > 0", False),
    ("PCIe replays", "increase(DCGM_FI_DEV_PCIE_REPLAY_COUNTER[5m]) > 0", False),
    ("hot GPU", "DCGM_FI_DEV_GPU_TEMP > 85", False),
    ("hot memory", "DCGM_FI_DEV_MEMORY_TEMP > 95", False),
    ("framebuffer nearly full",
     "DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE) > 0.95", False),
    ("energy", "rate(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION[5m]) > 0", False),
    # DCGM's value is already a rate (MB/s over all links), used as it is.
    ("NVLink traffic", "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL >= 0", True),
    ("PCIe throughput", "DCGM_FI_PROF_PCIE_TX_BYTES + DCGM_FI_PROF_PCIE_RX_BYTES >= 0", True),
    ("encoder busy", "DCGM_FI_DEV_ENC_UTIL + DCGM_FI_DEV_DEC_UTIL >= 0", True),
    ("memory by GPU UUID", "sum by (UUID) (DCGM_FI_DEV_FB_USED)", True),
]

COUNTERS = ["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
            "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
            "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL"]


def run(args, failures):
    prom_bin = args.prometheus or shutil.which("prometheus")
    if not prom_bin:
        print("SKIP: no prometheus binary (apt-get install prometheus)")
        return SKIP
    work = tempfile.mkdtemp(prefix="gpumon-dcgm-e2e-")
    serve = Serve(args.gpumon, args.fake_nvml, "xid", ["--interval", "200", "--compat", "dcgm"])
    prom = None
    started = time.monotonic()
    try:
        serve.wait_listening()
        prom = Prometheus(prom_bin, {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s",
                       "scrape_timeout": "1s"},
            "scrape_configs": [{"job_name": "dcgm", "static_configs": [
                {"targets": [serve.target]}]}]}, work)
        prom.wait_ready()
        prom.wait_for('DCGM_FI_DEV_XID_ERRORS{gpu="1",err_code="94"} == 94', "XID 94 on GPU 1")
        # The row remap is read once a second (with the other slow fields), the XID at once.
        prom.wait_for('DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{gpu="1"} == 1',
                      "the remapped row on GPU 1")
        prom.wait_for("DCGM_FI_PROF_PCIE_TX_BYTES",
                      "the PCIe reader's first value")

        for name, expr in DASHBOARD:
            result = prom.query(expr)
            check(len(result) == 2 or (len(result) == 1 and "(" in expr),
                  "dashboard %s: %d series for %s" % (name, len(result), expr), failures)
        for name, expr, holds in ALERTS:
            try:
                result = prom.query(expr)
            except RuntimeError as err:
                check(False, "alert %s does not run: %s" % (name, err), failures)
                continue
            check(bool(result) == holds, "alert %s: %s (expected %s) for %s"
                  % (name, "data" if result else "no data", "data" if holds else "none", expr),
                  failures)

        xid = {s["metric"]["gpu"]: s for s in prom.query("DCGM_FI_DEV_XID_ERRORS")}
        check(sorted(xid) == ["0", "1"], "XID series on both GPUs: %s" % sorted(xid), failures)
        one = xid.get("1", {}).get("metric", {})
        check(one.get("err_msg") == "Contained ECC error" and
              one.get("DCGM_FI_DRIVER_VERSION") == "580.159.04" and
              one.get("UUID", "").startswith("GPU-"),
              "XID 94 labels: %s" % one, failures)
        total = prom.query("DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE + DCGM_FI_DEV_FB_RESERVED")
        mib = [float(s["value"][1]) for s in total]
        check(len(mib) == 2 and all(143769 <= m <= 143771 and m == int(m) for m in mib),
              "used + free + reserved is the H200's 143771 MiB in whole MiB: %s" % mib, failures)
        meta = prom.api("/api/v1/metadata")
        for name in COUNTERS:
            kind = meta.get(name, [{}])[0].get("type")
            check(kind == "counter", "%s typed %s, dcgm-exporter: counter" % (name, kind),
                  failures)
        check(meta.get("DCGM_FI_DEV_GPU_UTIL", [{}])[0].get("type") == "gauge",
              "DCGM_FI_DEV_GPU_UTIL is a gauge", failures)
    finally:
        stop_all(prom, (serve,), work, started, failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(prometheus_test_main(__doc__, run))
