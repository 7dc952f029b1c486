# SPDX-License-Identifier: MIT
"""Helpers for the tests that run the real `gpumon serve` process on gpumon's fake NVML.

Standard library only (the tests run under whatever python3 CMake found).
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import sys
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "util", "testing"))
from wait_for import TIMEOUT_S, wait_for  # noqa: E402,F401  (re-exported for the serve tests)

SKIP = 77  # CTest's SKIP_RETURN_CODE for these tests
LISTENING = re.compile(r"listening on (https?)://([^/ ]+):(\d+)/")


def private_runtime_dir():
    """A fresh XDG_RUNTIME_DIR, so a serve's default agent socket is its own and never the
    user's (or another test's) $XDG_RUNTIME_DIR/gpumon/agent.sock. The caller removes it."""
    return tempfile.mkdtemp(prefix="gpumon-xdg-")


class Serve:
    """`gpumon serve --listen 127.0.0.1:0 ARGS` on a fake scenario; stderr collected in lines.
    Runs with a private XDG_RUNTIME_DIR unless `env` sets one; `agent_socket` is where its
    agent socket is by default."""

    def __init__(self, gpumon, fake_lib, scenario, args=(), env=None, scenario_dir=None):
        e = dict(os.environ)
        self._runtime_dir = None
        if "XDG_RUNTIME_DIR" not in (env or {}):
            self._runtime_dir = private_runtime_dir()
            e["XDG_RUNTIME_DIR"] = self._runtime_dir
        e.update({"GPUMON_NVML_LIBRARY": fake_lib, "GPUMON_FAKE_SCENARIO": scenario})
        if scenario_dir:
            e["GPUMON_SCENARIO_DIR"] = scenario_dir
        e.update(env or {})
        self.scenario = scenario
        self.agent_socket = os.path.join(e["XDG_RUNTIME_DIR"], "gpumon", "agent.sock")
        self.lines = []
        self.port = None
        self._cond = threading.Condition()
        self.proc = subprocess.Popen(
            [gpumon, "serve", "--listen", "127.0.0.1:0", *args], env=e,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._readers = [threading.Thread(target=self._read, args=(stream,), daemon=True)
                         for stream in (self.proc.stderr, self.proc.stdout)]
        for t in self._readers:
            t.start()

    def _read(self, stream):
        for line in stream:
            with self._cond:
                self.lines.append(line.rstrip("\n"))
                m = LISTENING.search(line)
                if m:
                    self.port = int(m.group(3))
                self._cond.notify_all()

    def wait_listening(self, timeout=TIMEOUT_S):
        """The bound port; raises with the output so far when it does not come."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self.port is None:
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise RuntimeError("gpumon serve did not start listening (exit %s):\n%s"
                                       % (self.proc.poll(), self.output()))
                self._cond.wait(min(left, 0.2))
        return self.port

    @property
    def base(self):
        return "http://127.0.0.1:%d" % self.port

    @property
    def target(self):
        return "127.0.0.1:%d" % self.port

    def output(self):
        return "\n".join(self.lines)

    def stop(self, sig=signal.SIGTERM, timeout=TIMEOUT_S):
        """Sends `sig` and returns the exit status (killing it after `timeout`), once its last
        lines are read."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise RuntimeError("gpumon serve did not stop within %d s after %s:\n%s"
                                   % (timeout, sig, self.output()))
        for t in self._readers:  # they end at the end of the streams
            t.join(timeout)
        if self._runtime_dir:
            shutil.rmtree(self._runtime_dir, ignore_errors=True)
        return self.proc.returncode


class Rank:
    """A stand-in training process on an agent socket: the NDJSON lines `import gpumon` sends
    (docs/python.md, "Protocol"): a hello, then steps, then a bye."""

    def __init__(self, socket_path, pid, rank, local_rank=None, world_size=None,
                 pci_bus_id=None, job=None, hostname=None, timeout=TIMEOUT_S):
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(socket_path)
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        hello = {"type": "hello", "v": 1, "pid": pid, "rank": rank, "local_rank": local_rank,
                 "world_size": world_size, "hostname": hostname or socket.gethostname(),
                 "device": "cpu"}
        if pci_bus_id:  # a GPU's identity comes with its torch device, as the client sends it
            hello["pci_bus_id"] = pci_bus_id
            hello["device"] = "cuda:0"
        if job:  # the hello's job object (docs/python.md): what the job_id label comes from
            hello["job"] = job
        self._send(hello)
        self.step_no = 0

    def _send(self, message):
        self.sock.sendall((json.dumps(message) + "\n").encode())

    def step(self, cpu_s=0.1, data_wait_s=0.02, gpu_s=0.08, mem=True):
        t = time.time()
        m = {"type": "step", "step": self.step_no, "t_start": t - cpu_s, "t_end": t,
             "cpu_step_s": cpu_s, "data_wait_s": data_wait_s, "gpu_step_s": gpu_s}
        if mem:
            m["mem"] = {"allocated": 1 << 30, "reserved": 2 << 30, "inactive_split": 1 << 20,
                        "num_alloc_retries": 0, "num_ooms": 0}
        self._send(m)
        self.step_no += 1

    def action(self, name, **fields):
        """What the OOM guard or the adaptive loader sends when it acts (docs/python.md)."""
        self._send(dict(fields, type="action", action=name, step=self.step_no))

    def bye(self):
        self._send({"type": "bye"})
        self.sock.close()


class JobProcess:
    """A process of a job as a node sees it on a GPU: `sleep` with GPUMON_JOB_ID=`job_id` in its
    environment, for a scenario to list on a GPU by its `pid` (scenario_with_process). The node
    reads a GPU process's job from /proc/PID/environ (docs/exporter.md, "Jobs"), but takes a
    process whose open files include no /dev/nvidia* for another one (a reused pid) and reads
    nothing of it; this one has no open file at all, which the node cannot judge, so it reads
    it. `stop()` ends it."""

    def __init__(self, job_id, timeout=TIMEOUT_S):
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GPUMON_JOB_ID": job_id}
        self.proc = subprocess.Popen(["sh", "-c", "exec sleep 3600 0<&- 1>&- 2>&-"], env=env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        self.pid = self.proc.pid

        # Until sleep runs with no file open: the node reads a pid once (as long as it lives),
        # so it must not see the shell's files first.
        def ready():
            if self.proc.poll() is not None:
                raise RuntimeError("the job's stand-in process exited with %s"
                                   % self.proc.returncode)
            try:
                with open("/proc/%d/comm" % self.pid, encoding="utf-8") as f:
                    comm = f.read().strip()
                return comm == "sleep" and not os.listdir("/proc/%d/fd" % self.pid)
            except OSError:
                return False

        if not wait_for(ready, timeout=timeout, interval=0.02):
            self.stop()
            raise RuntimeError("the job's stand-in process did not start within %d s" % timeout)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait()


def scenario_with_process(scenario_dir, name, directory, pid, gpu=0, used_memory_bytes=8 << 30,
                          sm_util_pct=90):
    """Writes DIRECTORY/NAME.json: scenario NAME of `scenario_dir` with one compute process,
    `pid` ("python3", `used_memory_bytes`, the driver's per-process SM samples at
    `sm_util_pct`), in place of GPU `gpu`'s processes. Serve(..., scenario_dir=DIRECTORY) then
    plays NAME with it."""
    with open(os.path.join(scenario_dir, name + ".json"), encoding="utf-8") as f:
        sc = json.load(f)
    devices = sc.setdefault("devices", [])
    while len(devices) <= gpu:
        devices.append({})
    devices[gpu]["processes"] = [{"pid": pid, "name": "python3",
                                  "used_memory_bytes": used_memory_bytes,
                                  "sm_util_pct": sm_util_pct}]
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name + ".json"), "w", encoding="utf-8") as f:
        json.dump(sc, f, indent=1)
    return directory


def http_get(url, timeout=TIMEOUT_S, source=None):
    """(status, headers, body bytes). `source` binds the client to that local address."""
    if source is None:
        try:
            with urllib.request.urlopen(url, timeout=timeout) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()
    m = re.match(r"http://([^:/]+):(\d+)(/.*)?$", url)
    host, port, path = m.group(1), int(m.group(2)), m.group(3) or "/"
    with socket.create_connection((host, port), timeout=timeout, source_address=(source, 0)) as s:
        s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
                   % (path, host)).encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, {}, body


def history_ticks(base):
    """How many ticks a serve at `base` keeps in its history (/api/v1/history). A metric the
    dashboard does not chart, so the sampler's ticks answer, not the chart history's 1 s rows."""
    history = http_get(base + "/api/v1/history?seconds=3600&metrics=utilization_memory_pct")[2]
    gpus = json.loads(history)["gpus"]
    return len(gpus[0]["time"]) if gpus else 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def check(cond, message, failures):
    """Records a failed check (the tests report them all, then exit 1)."""
    if not cond:
        failures.append(message)
        print("FAIL: " + message, flush=True)
    return cond


def prometheus_test_main(doc, run):
    """main() of the tests against a real Prometheus: parses --gpumon, --fake-nvml and
    --prometheus (default: `prometheus` on PATH), calls run(args, failures) (0, 1 or SKIP; a
    RuntimeError is a failure) and prints PASS, SKIP or the number of failed checks."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--gpumon", required=True)
    ap.add_argument("--fake-nvml", required=True)
    ap.add_argument("--prometheus", help="default: prometheus on PATH")
    args = ap.parse_args()
    failures = []
    try:
        rc = run(args, failures)
    except RuntimeError as e:
        print("FAIL: %s" % e)
        rc = 1
    print("PASS" if rc == 0 else ("SKIP" if rc == SKIP else "FAILED: %d check(s)" % len(failures)))
    return rc
