#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The web dashboard in real headless Chromium against a real `gpumon serve` (not the stub).

Starts `gpumon serve --listen 127.0.0.1:0` on the fake NVML's `demo` scenario (8 GPUs), checks
that `/` is the embedded page with its Content-Security-Policy header, then runs
web/test/test_dashboard_chromium.py --base-url against it (charts for every GPU, live updates,
no console errors or CSP violations, same-origin requests only) and stops serve with SIGINT,
which must exit 0.

  serve_dashboard_chromium_test.py --gpumon build/gpumon \\
      --fake-nvml build/fake-nvml/libnvidia-ml.so.1 --out build/serve-chromium
Exit 0 pass, 1 fail, 77 skipped (no chromium, or the page was built without uPlot).
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_test_support import SKIP, Serve, check, history_ticks, http_get, wait_for  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CHROMIUM_TEST = os.path.join(ROOT, "web", "test", "test_dashboard_chromium.py")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpumon", required=True)
    ap.add_argument("--fake-nvml", required=True)
    ap.add_argument("--out", required=True, help="screenshots and results.json")
    ap.add_argument("--interval", default="1000", help="serve's --interval (ms)")
    args = ap.parse_args()
    if not (shutil.which("chromium") or shutil.which("chromium-browser")):
        print("SKIP: no chromium (apt-get install chromium)")
        return SKIP
    failures = []
    serve = Serve(args.gpumon, args.fake_nvml, "demo", ["--interval", args.interval])
    rc = 1
    try:
        serve.wait_listening()
        status, headers, body = http_get(serve.base + "/")
        check(status == 200, "/ answers 200, got %d" % status, failures)
        csp = {k.lower(): v for k, v in headers.items()}.get("content-security-policy", "")
        check("frame-ancestors 'none'" in csp and "unsafe-inline" not in csp,
              "/ carries the dashboard's CSP header: %r" % csp, failures)
        if b'data-state="no-chart-library"' in body:  # as web/test/test_dashboard_chromium.py
            print("SKIP: the dashboard was built without uPlot (npm ci --prefix web)")
            return SKIP
        # A few ticks of history for the first chart render.
        check(wait_for(lambda: history_ticks(serve.base) >= 3), "three ticks of history", failures)
        rc = subprocess.run([sys.executable, CHROMIUM_TEST, "--base-url", serve.base,
                             "--expect-gpus", "8", "--out", args.out]).returncode
        check(rc in (0, SKIP), "test_dashboard_chromium.py against serve: exit %d" % rc,
              failures)
    finally:
        stopped = serve.stop(signal.SIGINT)
        check(stopped == 0, "gpumon serve exits 0 on SIGINT, got %s\n%s"
              % (stopped, serve.output()), failures)
    if failures:
        print("FAILED: %d check(s)" % len(failures))
        return 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
