#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`gpumon serve` as a process, on gpumon's fake NVML: what the command itself adds to the
exporter and HTTP libraries (their own tests cover those in depth).

  - start-up lines (address, SIMULATED label), SIGTERM/SIGINT -> exit 0;
  - the HTTP server's counts reach /metrics (gpumon_http_requests_total, _rejected_total);
    /metrics and the history gzipped when asked, unpacking to the same text;
  - a slowloris of 64 trickling connections (from 127.0.0.2) while /metrics keeps answering
    from 127.0.0.1 (the worst answer time is printed, not checked), past the 5 s idle timeout,
    with RSS staying bounded;
  - failures: port in use (names the address, suggests --listen), no driver, a bad web
    config, a bad option; a warning when listening beyond loopback without TLS/auth;
  - --record FILE writes a recording `gpumon export` reads back, with the steps of a rank
    attached to serve's agent socket;
  - the agent socket: a stand-in rank's hello and steps reach /api/v1/training and
    gpumon_training_* (its PCI bus id mapped to the NVML index); a second serve on the same
    socket warns once and serves on without it; --no-agent hosts none.

  serve_command_test.py --gpumon build/gpumon --fake-nvml build/fake-nvml/libnvidia-ml.so.1
Exit 0 pass, 1 fail. About 20 s.
"""

import argparse
import gzip
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_test_support import (TIMEOUT_S, Rank, Serve, check, history_ticks,  # noqa: E402
                                http_get, private_runtime_dir, wait_for)

SLOWLORIS_CONNECTIONS = 64
SLOWLORIS_SECONDS = 7  # past the server's 5 s idle timeout


def rss_kb(pid):
    with open("/proc/%d/status" % pid, encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def metric(body, name, labels):
    m = re.search(r"^%s\{%s\} (\S+)$" % (re.escape(name), re.escape(labels)), body, re.M)
    return float(m.group(1)) if m else None


def test_counts_and_stop(args, failures):
    serve = Serve(args.gpumon, args.fake_nvml, "demo", ["--interval", "100"])
    serve.wait_listening()
    check(any("SIMULATED GPUs (scenario demo)" in l for l in serve.lines), "SIMULATED label",
          failures)
    check(any("listening on http://127.0.0.1:%d/" % serve.port in l for l in serve.lines),
          "prints the bound address", failures)
    check(not any("warning" in l for l in serve.lines), "no warning on loopback", failures)
    for _ in range(5):
        http_get(serve.base + "/health")
    http_get(serve.base + "/nowhere")
    got = {}

    def counted():  # the /metrics body is rendered again after each tick (or each second)
        got["status"], got["headers"], raw = http_get(serve.base + "/metrics")
        got["body"] = raw.decode()
        return metric(got["body"], "gpumon_http_rejected_total", 'reason="not_found"') == 1

    wait_for(counted)
    status, headers, body = got["status"], got["headers"], got["body"]
    check(status == 200, "/metrics 200", failures)
    check(headers.get("Content-Type") == "text/plain; version=0.0.4; charset=utf-8",
          "/metrics content type %r" % headers.get("Content-Type"), failures)
    ok = metric(body, "gpumon_http_requests_total", 'code="200"')
    check(ok is not None and ok >= 5, "gpumon_http_requests_total{code=200} >= 5, got %s" % ok,
          failures)
    nf = metric(body, "gpumon_http_rejected_total", 'reason="not_found"')
    check(nf == 1, "gpumon_http_rejected_total{reason=not_found} 1, got %s" % nf, failures)
    check("gpumon_gpus 8\n" in body, "8 GPUs", failures)
    check('version="' in body and "gpumon_build_info" in body, "build info", failures)
    # gzip when the scraper asks (Prometheus always does), the same exposition once unpacked;
    # the JSON API too (every metric's history: well past the 1 KiB below which bodies go plain).
    wait_for(lambda: history_ticks(serve.base) >= 2)
    for path in ("/metrics", "/api/v1/history?seconds=3600"):
        req = urllib.request.Request(serve.base + path, headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(req, timeout=TIMEOUT_S) as r:
            encoding, packed = r.headers.get("Content-Encoding"), r.read()
        check(encoding == "gzip", "%s gzipped when asked (Content-Encoding %r)" % (path, encoding),
              failures)
        try:
            text = gzip.decompress(packed).decode()
        except (OSError, UnicodeDecodeError) as e:
            text = ""
            check(False, "%s: the gzip body unpacks (%s)" % (path, e), failures)
        if path == "/metrics":
            check("gpumon_gpus 8\n" in text and text.endswith("\n"),
                  "/metrics unpacked is the exposition", failures)
        else:
            gpus = len(json.loads(text)["gpus"])
            check(gpus == 8, "history unpacked is the JSON of 8 GPUs, got %d" % gpus, failures)
    rc = serve.stop(signal.SIGINT)
    check(rc == 0, "exit 0 on SIGINT, got %s" % rc, failures)
    check(any("gpumon serve: stopped (" in l for l in serve.lines), "a stop line", failures)


def slow_client(port, stop, opened):
    """One slowloris connection: a request line, then a header byte every 0.5 s, never done."""
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S,
                                     source_address=("127.0.0.2", 0))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        opened.append(s)
        while not stop.is_set():
            s.sendall(b"a")
            stop.wait(0.5)
    except OSError:
        pass  # refused or closed by the server: what a limit looks like from here


def test_slowloris(args, failures):
    serve = Serve(args.gpumon, args.fake_nvml, "demo", ["--interval", "200"])
    port = serve.wait_listening()
    for _ in range(20):  # warm the caches before measuring memory
        http_get(serve.base + "/metrics")
    rss_before = rss_kb(serve.proc.pid)
    stop, opened = threading.Event(), []
    threads = [threading.Thread(target=slow_client, args=(port, stop, opened), daemon=True)
               for _ in range(SLOWLORIS_CONNECTIONS)]
    for t in threads:
        t.start()
    wait_for(lambda: len(opened) >= SLOWLORIS_CONNECTIONS // 2)
    # At least 10 answers, and on past the idle timeout. A server starved by the slow
    # connections would not answer at all (they trickle on, so they are never idle); a slow
    # answer on a loaded machine is only printed.
    worst, answered, errors = 0.0, 0, []
    deadline = time.monotonic() + SLOWLORIS_SECONDS
    while (time.monotonic() < deadline or answered < 10) and not errors:
        t0 = time.monotonic()
        try:
            status, _, body = http_get(serve.base + "/metrics", source="127.0.0.1")
            if status == 200 and b"gpumon_gpus 8" in body:
                answered += 1
            else:
                errors.append(status)
        except OSError as e:
            errors.append(str(e))
        worst = max(worst, time.monotonic() - t0)
        time.sleep(0.2)
    rss_during = rss_kb(serve.proc.pid)
    stop.set()
    for t in threads:
        t.join(5)
    for s in opened:
        s.close()
    print("slowloris: %d connections held open, /metrics answered %d times, worst %.0f ms, "
          "RSS %d -> %d KiB" % (len(opened), answered, worst * 1000, rss_before, rss_during))
    check(len(opened) >= SLOWLORIS_CONNECTIONS // 2, "the slow connections were accepted (%d)"
          % len(opened), failures)
    check(not errors and answered >= 10, "/metrics kept answering: %d ok, errors %s"
          % (answered, errors[:5]), failures)
    check(rss_during - rss_before < 16 * 1024, "RSS grew %d KiB (< 16 MiB)"
          % (rss_during - rss_before), failures)
    check(http_get(serve.base + "/health")[0] == 200, "healthy after the slowloris", failures)
    rc = serve.stop()
    check(rc == 0, "exit 0 on SIGTERM after the slowloris, got %s" % rc, failures)


def run_serve(args, extra, scenario="demo", timeout=TIMEOUT_S):
    runtime = private_runtime_dir()
    try:
        env = dict(os.environ, GPUMON_NVML_LIBRARY=args.fake_nvml, GPUMON_FAKE_SCENARIO=scenario,
                   XDG_RUNTIME_DIR=runtime)
        return subprocess.run([args.gpumon, "serve", *extra], env=env, capture_output=True,
                              text=True, timeout=timeout)
    finally:
        shutil.rmtree(runtime, ignore_errors=True)


def test_failures(args, failures, work):
    holder = Serve(args.gpumon, args.fake_nvml, "demo")
    port = holder.wait_listening()
    r = run_serve(args, ["--listen", "127.0.0.1:%d" % port])
    check(r.returncode == 1, "port in use: exit 1, got %d" % r.returncode, failures)
    check("127.0.0.1:%d" % port in r.stderr and "--listen" in r.stderr,
          "port in use: names the address and --listen: %r" % r.stderr, failures)
    holder.stop()

    r = run_serve(args, ["--listen", "127.0.0.1:0"], scenario="init-no-driver")
    check(r.returncode == 1 and "no NVIDIA driver" in r.stderr,
          "no driver: exit 1 with the message, got %d %r" % (r.returncode, r.stderr), failures)

    bad = os.path.join(work, "web.yml")
    with open(bad, "w", encoding="utf-8") as f:
        f.write("basic_auth_users:\n  bob: not-a-hash\n")
    r = run_serve(args, ["--listen", "127.0.0.1:0", "--web.config.file", bad])
    check(r.returncode == 1 and bad in r.stderr and "bob" in r.stderr,
          "bad web config: exit 1 naming file and user, got %d %r" % (r.returncode, r.stderr),
          failures)

    for extra in (["--interval", "5"], ["--compat", "x"], ["--bogus"]):
        r = run_serve(args, extra)
        check(r.returncode == 2 and "usage: gpumon serve" in r.stderr,
              "%s: exit 2 with the usage, got %d" % (extra, r.returncode), failures)
    r = run_serve(args, ["--help"])
    check(r.returncode == 0 and "--web.config.file" in r.stdout, "--help", failures)

    # Serve() always listens on loopback: this one is started by hand.
    env = dict(os.environ, GPUMON_NVML_LIBRARY=args.fake_nvml, GPUMON_FAKE_SCENARIO="demo",
               XDG_RUNTIME_DIR=work)
    p = subprocess.Popen([args.gpumon, "serve", "--listen", "0.0.0.0:0"], env=env,
                         stderr=subprocess.PIPE, text=True)
    lines = []
    for line in p.stderr:
        lines.append(line)
        if "listening on" in line:
            break
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=TIMEOUT_S)
    check(any("warning: listening on 0.0.0.0:0 beyond loopback" in l for l in lines),
          "warning beyond loopback without TLS/auth: %r" % lines, failures)
    check(p.returncode == 0, "0.0.0.0: exit 0 on SIGTERM", failures)


def test_record(args, failures, work):
    path = os.path.join(work, "serve.gpumon")
    serve = Serve(args.gpumon, args.fake_nvml, "demo", ["--interval", "100", "--record", path])
    serve.wait_listening()
    rank = Rank(serve.agent_socket, pid=4242, rank=0)
    for _ in range(3):
        rank.step()
    rank.bye()
    # The rank's steps and bye are read, and 8 ticks were taken, before serve stops.
    wait_for(lambda: [(r["steps"], r["connected"]) for r in training(serve)["ranks"]]
             == [(3, False)])
    wait_for(lambda: history_ticks(serve.base) >= 8)
    rc = serve.stop()
    check(rc == 0, "--record: exit 0, got %s" % rc, failures)
    check(any(path in l and "ticks" in l for l in serve.lines), "--record: summary line",
          failures)
    env = dict(os.environ, GPUMON_NVML_LIBRARY=args.fake_nvml)
    r = subprocess.run([args.gpumon, "export", path, "--format", "csv"], env=env,
                       capture_output=True, text=True, timeout=TIMEOUT_S)
    rows = r.stdout.count("\n") - 1
    check(r.returncode == 0 and rows >= 8 * 8 and rows % 8 == 0,
          "--record: export has whole 8-GPU ticks (>= 8 of them), got %d rows, rc %d %s"
          % (rows, r.returncode, r.stderr), failures)
    r = subprocess.run([args.gpumon, "export", path, "--steps", "--format", "csv"], env=env,
                       capture_output=True, text=True, timeout=TIMEOUT_S)
    check(r.returncode == 0 and r.stdout.count("\n") == 4,
          "--record: the rank's 3 steps are in the recording: rc %d %r %s; serve said: %s"
          % (r.returncode, r.stdout, r.stderr, " | ".join(serve.lines[-6:])), failures)


def training(serve):
    return json.loads(http_get(serve.base + "/api/v1/training")[2])


def test_agent(args, failures):
    serve = Serve(args.gpumon, args.fake_nvml, "demo", ["--interval", "100"])
    serve.wait_listening()
    check(any("training processes attach on " + serve.agent_socket in l for l in serve.lines),
          "serve names its agent socket: %s" % serve.lines, failures)
    devices = json.loads(http_get(serve.base + "/api/v1/devices")[2])["gpus"]
    nvml_bus = devices[3]["pci_bus_id"]  # "00000000:xx:00.0"; torch writes "0000:xx:00.0"
    rank = Rank(serve.agent_socket, pid=5001, rank=1, local_rank=1, world_size=2,
                pci_bus_id=nvml_bus[4:])
    for _ in range(3):
        rank.step()
    wait_for(lambda: [r["steps"] for r in training(serve)["ranks"]] == [3])
    ranks = training(serve)["ranks"]
    check(len(ranks) == 1 and ranks[0]["steps"] == 3 and ranks[0]["gpu"] == 3
          and ranks[0]["rank"] == 1 and ranks[0]["connected"],
          "/api/v1/training has the rank on GPU 3: %s" % ranks, failures)
    body = http_get(serve.base + "/metrics")[2].decode()
    check(metric(body, "gpumon_training_steps_total", 'rank="1",local_rank="1",gpu="3"') == 3,
          "gpumon_training_steps_total of the rank is 3", failures)
    # The training charts' history: the same steps, in the rows of their seconds.
    status, _, raw = http_get(serve.base + "/api/v1/training/history?seconds=600&points=100")
    hist = json.loads(raw) if status == 200 else {}
    rows = hist.get("ranks", [])
    check(status == 200 and len(rows) == 1 and rows[0]["rank"] == 1 and rows[0]["time"]
          and all(abs(v - 0.1) < 1e-6 for v in rows[0]["values"]["step_seconds"]),
          "/api/v1/training/history has the rank's steps: %s %s" % (status, hist), failures)

    # A second serve on the same socket: one warning, then it serves on without it.
    second = Serve(args.gpumon, args.fake_nvml, "demo", ["--interval", "100"],
                   env={"XDG_RUNTIME_DIR": os.path.dirname(os.path.dirname(serve.agent_socket))})
    second.wait_listening()
    warned = [l for l in second.lines if "no agent socket" in l]
    check(len(warned) == 1 and "already listens" in warned[0],
          "second serve warns once: %s" % second.lines, failures)
    check(http_get(second.base + "/metrics")[0] == 200, "second serve answers /metrics", failures)
    check(training(second)["ranks"] == [], "second serve has no ranks", failures)
    check(second.stop() == 0, "second serve exits 0", failures)
    check(os.path.exists(serve.agent_socket), "the first serve's socket is left alone", failures)

    rank.bye()
    wait_for(lambda: not training(serve)["ranks"][0]["connected"])
    check(not training(serve)["ranks"][0]["connected"], "bye: the rank is disconnected",
          failures)
    check(serve.stop() == 0, "serve with a rank exits 0", failures)

    none = Serve(args.gpumon, args.fake_nvml, "demo", ["--no-agent"])
    none.wait_listening()
    check(not os.path.exists(none.agent_socket), "--no-agent: no socket", failures)
    check(training(none) == {"enabled": False, "connected": 0, "untracked": 0,
                             "rate_window_steps": 32, "stale_after_seconds": 300, "ranks": []},
          "--no-agent: /api/v1/training is disabled: %s" % training(none), failures)
    check(none.stop() == 0, "--no-agent: exit 0", failures)


def test_diagnoses(args, failures):
    # The "xid" scenario: XID 13 on GPU 0 at 3 s. serve diagnoses every 5 s.
    serve = Serve(args.gpumon, args.fake_nvml, "xid", ["--interval", "100"])
    serve.wait_listening()
    # The rank trains on GPU 0: its XID is the run's (on a GPU no rank uses it would be the
    # machine's state, costing the run no points).
    bus0 = json.loads(http_get(serve.base + "/api/v1/devices")[2])["gpus"][0]["pci_bus_id"]
    rank = Rank(serve.agent_socket, pid=5002, rank=0, pci_bus_id=bus0[4:])
    d = {}

    def xid_findings():
        d.update(json.loads(http_get(serve.base + "/api/v1/diagnoses")[2]))
        return [f for f in d.get("findings", []) if f["id"] == "xid"]

    found = wait_for(xid_findings)
    check(found and 0 in found[0]["gpus"] and d["recording"] == "live" and d["health_score"] < 100,
          "/api/v1/diagnoses has the XID on GPU 0: %s" % found, failures)
    body = http_get(serve.base + "/metrics")[2].decode()
    check(re.search(r'^gpumon_diagnosis_active\{id="xid",severity="\w+",gpu="0"(,rank="0")?\} 1$',
                    body, re.M)
          is not None, "/metrics has gpumon_diagnosis_active for the XID", failures)
    check(re.search(r"^gpumon_health_score \d+$", body, re.M) is not None,
          "/metrics has gpumon_health_score", failures)
    # The rank got the findings lines: the first right after its hello, then the change.
    rank.sock.settimeout(TIMEOUT_S)
    got = b""
    try:
        while b'"id":"xid"' not in got:
            chunk = rank.sock.recv(65536)
            if not chunk:
                break
            got += chunk
    except OSError:
        pass
    check(got.startswith(b'{"type":"findings"') and b'"id":"xid"' in got,
          "the rank received the findings: %r" % got[:300], failures)
    # The log line comes through serve's stderr, which is read on another thread.
    check(wait_for(lambda: any(" xid gpu 0" in l for l in serve.lines)),
          "serve logs the finding: %s" % serve.lines, failures)
    rank.bye()
    check(serve.stop() == 0, "serve with diagnoses exits 0", failures)

    off = Serve(args.gpumon, args.fake_nvml, "xid", ["--no-diagnose", "--no-agent"])
    off.wait_listening()
    check(json.loads(http_get(off.base + "/api/v1/diagnoses")[2]) == {"enabled": False},
          "--no-diagnose: /api/v1/diagnoses is disabled", failures)
    check("gpumon_health_score" not in http_get(off.base + "/metrics")[2].decode(),
          "--no-diagnose: no gpumon_health_score", failures)
    check(off.stop() == 0, "--no-diagnose: exit 0", failures)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpumon", required=True)
    ap.add_argument("--fake-nvml", required=True)
    ap.add_argument("--no-record", action="store_true", help="built without src/record")
    args = ap.parse_args()
    failures = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="gpumon-serve-test-") as work:
        for name, test in (("counts and stop", lambda: test_counts_and_stop(args, failures)),
                           ("slowloris", lambda: test_slowloris(args, failures)),
                           ("failures", lambda: test_failures(args, failures, work)),
                           ("record", lambda: test_record(args, failures, work)),
                           ("agent", lambda: test_agent(args, failures)),
                           ("diagnoses", lambda: test_diagnoses(args, failures))):
            if name in ("record", "agent", "diagnoses") and args.no_record:
                continue
            before = len(failures)
            try:
                test()
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
                check(False, "%s: %s" % (name, e), failures)
            print("%s %s" % ("ok  " if len(failures) == before else "FAIL", name), flush=True)
    print("took %.1f s" % (time.monotonic() - started))
    print("PASS" if not failures else "FAILED: %d check(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
