# SPDX-License-Identifier: MIT
"""A stand-in for `gpumon serve`: serves the dashboard page at / and the JSON API of
docs/exporter.md (/api/v1/devices, /api/v1/current, /api/v1/history) from generated fixtures.

8 GPUs (by default), 1 h of 1 Hz history ending now, values that change every second, missing
values (null), a lost GPU, hostile strings (a process named `</script><img src=x onerror=...>`).
Standard library only. Run by itself to look at the dashboard in a browser:

    python3 web/test/stub_api.py --html build/web/dashboard.html --port 9477
"""
import argparse
import json
import math
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOSTILE_PROCESS = "</script><img src=x onerror=alert(1)>"
HOSTILE_USER = "<b>mallory</b>"
HOSTILE_GPU_NAME = "NVIDIA H200 <img src=x onerror=alert(2)>"
LOST_GPU = 5
NO_GPM_GPU = 7  # sm_active_ratio is null throughout (a GPU without GPM)
HISTORY_MAX_S = 3600
METRICS = [
    "utilization_gpu_pct", "utilization_memory_pct", "memory_total_bytes", "memory_used_bytes",
    "memory_free_bytes", "temperature_gpu_c", "temperature_memory_c", "power_draw_w",
    "power_limit_w", "power_max_w", "sm_clock_mhz", "mem_clock_mhz", "pstate",
    "sm_active_ratio", "clock_event_reasons", "throttled",
]
MEM_TOTAL = 150_754_820_096  # 140.4 GiB


class Fixture:
    """Deterministic values as a function of (gpu, whole second)."""

    def __init__(self, gpus, now=None):
        self.gpus = gpus
        self.start = int(now if now is not None else time.time())
        self.lost_since = self.start - 300  # the lost GPU fell off the bus 5 min before start
        # History is precomputed for [start - HISTORY_MAX_S, start + 600] so requests are fast.
        self.t0 = self.start - HISTORY_MAX_S + 1
        self.t1 = self.start + 600
        self.cache = {}
        for g in range(gpus):
            cols = {m: [] for m in METRICS}
            for t in range(self.t0, self.t1 + 1):
                vals = self.values(g, t)
                for m in METRICS:
                    cols[m].append(vals[m])
            self.cache[g] = cols

    def values(self, g, t):
        if g == LOST_GPU and t >= self.lost_since:
            return {m: None for m in METRICS}
        phase = t / 45.0 + g * 0.7
        util = round(52 + 45 * math.sin(phase), 1)  # 7..97: never 0
        used = int(MEM_TOTAL * (0.35 + 0.3 * (1 + math.sin(phase / 3)) / 2 + 0.01 * g))
        power = round(300 + 350 * (util / 100) + 5 * math.sin(t / 3.0), 1)
        v = {
            "utilization_gpu_pct": util,
            "utilization_memory_pct": round(util * 0.6, 1),
            "memory_total_bytes": MEM_TOTAL,
            "memory_used_bytes": used,
            "memory_free_bytes": MEM_TOTAL - used,
            "temperature_gpu_c": round(45 + 30 * util / 100),
            "temperature_memory_c": None if g % 4 == 3 else round(50 + 28 * util / 100),
            "power_draw_w": power,
            "power_limit_w": 700.0,
            # Read by a slower sampler task (every 2 s, as `gpumon serve` does), none on odd GPUs.
            "power_max_w": None if g % 2 or t % 2 else round(power * 1.12, 1),
            "sm_clock_mhz": 1980 if util < 90 else 1755,
            "mem_clock_mhz": 2619,
            "pstate": 0,
            "sm_active_ratio": None if g == NO_GPM_GPU else round(util / 100 * 0.9, 4),
            "clock_event_reasons": 4 if util > 90 else 0,
            # The power cap at 1755 of 1980 MHz (89 %) is by design, not throttling; GPU 1 also
            # has a thermal slowdown then (current's reasons), which is.
            "throttled": 1 if g == 1 and util > 90 else 0,
        }
        if t % 97 == g:  # a missed read now and then: null, drawn as a gap
            v["utilization_gpu_pct"] = None
            v["power_draw_w"] = None
        return v

    def column(self, g, m, t_from, t_to):
        return self.cache[g][m][t_from - self.t0:t_to - self.t0 + 1]

    def now(self):
        return min(int(time.time()), self.t1)

    def devices(self):
        return {
            "system": {"hostname": "stub-host", "driver_version": "570.86.15",
                       "cuda_version": "12.8", "simulated": "stub-8gpu"},
            "gpus": [{
                "gpu": g,
                "name": HOSTILE_GPU_NAME if g == 6 else "NVIDIA H200",
                "pci_bus_id": "00000000:%02X:00.0" % (0x17 + g),
                "memory_total_bytes": MEM_TOTAL,
                "max_sm_clock_mhz": 1980,
                "max_mem_clock_mhz": 2619,
            } for g in range(self.gpus)],
        }

    def processes(self, g, t):
        if g == LOST_GPU or g == 4:
            return []
        procs = [{"pid": 1000 + g, "name": "python3", "user": "alice",
                  "used_memory_bytes": 40e9 + (t % 60) * 1e8}]
        if g == 2:
            procs.append({"pid": 4242, "name": HOSTILE_PROCESS, "user": HOSTILE_USER,
                          "used_memory_bytes": 8.1e10})
        return procs

    def current(self):
        t = self.now()
        gpus = []
        for g in range(self.gpus):
            vals = self.values(g, t)
            lost = g == LOST_GPU and t >= self.lost_since
            reasons = None if lost else (["sw_power_cap"] if vals["clock_event_reasons"] else [])
            if g == 1 and not lost:
                reasons = reasons + ["hw_thermal_slowdown"]
            metrics = {m: vals[m] for m in METRICS if m != "clock_event_reasons"}
            gpus.append({"gpu": g, "name": HOSTILE_GPU_NAME if g == 6 else "NVIDIA H200",
                         "lost": lost, "metrics": metrics, "clock_event_reasons": reasons,
                         "processes": self.processes(g, t)})
        return {"time": float(t), "simulated": "stub-8gpu", "interval_s": 1.0,
                "sampler": {"ticks": t - self.t0, "overruns": 0, "nvml_errors": 0,
                            "last_tick_age_s": round(time.time() - t, 3)},
                "gpus": gpus}

    def training(self):
        """Two DDP ranks on GPUs 0 and 1 (rank 1 waits for data more), and a third that left."""
        t = self.now()
        ranks = []
        for r in range(2):
            step_s = 0.2 + 0.05 * r + 0.01 * (t % 7)
            ranks.append({"pid": 2000 + r, "rank": r, "local_rank": r, "world_size": 2,
                          "gpu": r, "connected": True, "steps": (t - self.t0) * 5,
                          "last_step": (t - self.t0) * 5, "last_step_seconds": step_s,
                          "last_step_age_seconds": 0.1, "steps_per_second": 1 / step_s,
                          "data_wait_share": 0.05 + 0.3 * r,
                          "allocated_bytes": 30e9 + r * 1e9 + (t % 30) * 1e8,
                          "reserved_bytes": 40e9 + r * 1e9})
        ranks.append({"pid": 2999, "rank": None, "gpu": None, "connected": False,
                      "steps": 0, "last_step_seconds": None, "data_wait_share": None,
                      "allocated_bytes": None, "reserved_bytes": None})
        return {"enabled": True, "connected": 2, "ranks": ranks}

    def training_history(self, seconds, points):
        """The two ranks' hour as /api/v1/training/history gives it: a row per second, rank 1's
        data wait not measured for its first ten minutes (null, never 0), reduced to `points`
        by keeping every k-th row (the server keeps each run's extremes; the page is the same)."""
        t = self.now()
        seconds = max(1, min(HISTORY_MAX_S, seconds))
        times = [float(x) for x in range(max(self.t0, t - seconds + 1), t + 1)]
        stride = max(1, -(-len(times) // max(2, points))) if points else 1
        times = times[::stride]
        ranks = []
        for r in range(2):
            ranks.append({"pid": 2000 + r, "rank": r, "time": times, "values": {
                "step_seconds": [0.2 + 0.05 * r + 0.01 * (x % 7) for x in times],
                "data_wait_share": [None if r == 1 and x < self.t0 + 600 else 0.05 + 0.3 * r
                                    for x in times],
                "allocated_bytes": [30e9 + r * 1e9 + (x % 30) * 1e8 for x in times],
                "reserved_bytes": [40e9 + r * 1e9 for x in times]}})
        return {"interval_s": 1, "stride": stride,
                "metrics": ["step_seconds", "data_wait_share", "allocated_bytes", "reserved_bytes"],
                "ranks": ranks}

    def history(self, seconds, metrics):
        t = self.now()
        seconds = max(1, min(HISTORY_MAX_S, seconds))
        t_from = max(self.t0, t - seconds + 1)
        metrics = [m for m in metrics if m in METRICS] if metrics else list(METRICS)
        times = [float(x) for x in range(t_from, t + 1)]
        return {"interval_s": 1.0, "metrics": metrics,
                "gpus": [{"gpu": g, "time": times,
                          "values": {m: self.column(g, m, t_from, t) for m in metrics}}
                         for g in range(self.gpus)]}


class StubServer:
    """ThreadingHTTPServer on 127.0.0.1, ephemeral port. `fail_api = True` answers 503 to the
    API (a lost connection); `findings` (a list) is added to /api/v1/current; `requests` lists
    every path asked for."""

    def __init__(self, html, gpus=8, port=0):
        self.html = html
        self.fixture = Fixture(gpus)
        self.fail_api = False
        self.findings = None  # a list: sent as /api/v1/current's "findings"
        self.requests = []
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def send(self, code, body, ctype):
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def do_HEAD(self):
                self.do_GET()

            def do_GET(self):
                url = urllib.parse.urlsplit(self.path)
                with stub.lock:
                    stub.requests.append(self.path)
                if url.path == "/":
                    return self.send(200, stub.html, "text/html; charset=utf-8")
                if url.path.startswith("/api/v1/") and stub.fail_api:
                    return self.send(503, b"stub: API switched off\n", "text/plain; charset=utf-8")
                q = urllib.parse.parse_qs(url.query)
                fx = stub.fixture
                if url.path == "/api/v1/devices":
                    obj = fx.devices()
                elif url.path == "/api/v1/current":
                    obj = fx.current()
                    if stub.findings is not None:
                        obj["findings"] = stub.findings
                elif url.path == "/api/v1/diagnoses":
                    obj = {"enabled": False}  # as serve --no-diagnose: findings stay current's
                elif url.path == "/api/v1/training":
                    obj = fx.training()
                elif url.path == "/api/v1/training/history":
                    obj = fx.training_history(int(q.get("seconds", ["600"])[0]),
                                              int(q.get("points", ["0"])[0]))
                elif url.path == "/api/v1/history":
                    seconds = int(q.get("seconds", ["600"])[0])
                    metrics = [m for m in q.get("metrics", [""])[0].split(",") if m]
                    obj = fx.history(seconds, metrics)
                else:
                    return self.send(404, b"not found\n", "text/plain; charset=utf-8")
                body = json.dumps(obj, separators=(",", ":")).encode()
                self.send(200, body, "application/json")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self):
        host, port = self.httpd.server_address[:2]
        return "http://%s:%d" % (host, port)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--html", required=True, help="the built page (build/web/dashboard.html)")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--gpus", type=int, default=8)
    args = ap.parse_args()
    with open(args.html, "rb") as f:
        stub = StubServer(f.read(), gpus=args.gpus, port=args.port).start()
    print("serving", stub.base_url + "/", flush=True)
    try:
        stub.thread.join()
    except KeyboardInterrupt:
        stub.stop()


if __name__ == "__main__":
    main()
