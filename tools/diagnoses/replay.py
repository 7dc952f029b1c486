# SPDX-License-Identifier: MIT
"""Plays one synthetic case: `gpumon agent` on the fake NVML with the case's scenario, and the
case's step stream sent through the agent's Unix socket in real time (one connection per rank,
each message when its time comes, t_start/t_end moved to the wall clock).

steps.ndjson, one JSON object a line, in time order:
  {"conn": 0, "at": 1.68, "msg": {...}}   send msg on connection 0 at 1.68 s (opened at its
                                          first message; "t_start"/"t_end" of a step are
                                          seconds from the start and get the start's wall time
                                          added)
  {"conn": 0, "at": 9.08, "close": true}  close connection 0 (without a bye: a disconnect)
Connections still open at the case's duration_s are closed then, before the agent is stopped.
"""
import json
import os
import signal
import socket
import sqlite3
import subprocess
import time


class ReplayError(Exception):
    pass


def load_stream(path):
    entries = []
    if not os.path.exists(path):
        return entries
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                e = json.loads(line)
                float(e["at"])
                int(e["conn"])
            except (ValueError, KeyError, TypeError) as err:
                raise ReplayError("%s:%d: %s" % (path, n, err))
            if ("msg" in e) == bool(e.get("close")):
                raise ReplayError("%s:%d: needs exactly one of msg and close" % (path, n))
            entries.append(e)
    entries.sort(key=lambda e: e["at"])  # stable: same-time lines keep their order
    return entries


def _connectable(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(0.5)
        s.connect(path)
        return True
    except OSError:
        return False
    finally:
        s.close()


def agent_env(fake_nvml, scenario, runtime_dir):
    env = dict(os.environ)
    for k in ("GPUMON_FAKE_TIME_SCALE", "GPUMON_FAKE_TIME_OFFSET_S", "GPUMON_AGENT_SOCKET",
              "GPUMON_SCENARIO_DIR"):
        env.pop(k, None)
    env.update(GPUMON_NVML_LIBRARY=fake_nvml, GPUMON_FAKE_SCENARIO=os.path.abspath(scenario),
               XDG_RUNTIME_DIR=runtime_dir, LC_ALL="C")
    return env


class Played:
    """What a replay did: the start's wall time, steps sent per pid, how late messages went."""

    def __init__(self):
        self.t0_wall = None
        self.steps_sent = {}
        self.max_late_s = 0.0
        self.agent_rc = None
        self.agent_err = ""
        self.ready_after_s = None


def play(gpumon, fake_nvml, case_dir, duration_s, work, interval_ms=100):
    """Runs the case; the recording is work/run.gpumon. Raises ReplayError on any failure of
    the harness (not of the diagnosis)."""
    entries = load_stream(os.path.join(case_dir, "steps.ndjson"))
    sock = os.path.join(work, "a.sock")
    rec = os.path.join(work, "run.gpumon")
    err_path = os.path.join(work, "agent.err")
    played = Played()
    with open(err_path, "w") as err:
        t0 = time.monotonic()
        played.t0_wall = time.time()
        proc = subprocess.Popen(
            [gpumon, "agent", "--socket", sock, "-o", rec, "--interval", str(interval_ms)],
            env=agent_env(fake_nvml, os.path.join(case_dir, "scenario.json"), work),
            stdin=subprocess.DEVNULL, stdout=err, stderr=err)
        conns = {}
        try:
            while not (os.path.exists(sock) and _connectable(sock)):
                if proc.poll() is not None or time.monotonic() - t0 > 60:  # a hung agent
                    raise ReplayError("the agent did not listen: " + _tail(err_path))
                time.sleep(0.01)
            played.ready_after_s = time.monotonic() - t0
            # Scenario time 0 is the agent's nvmlInit, just before it wrote start_time_ms: start
            # the replay clock there, not at the exec (a debug build takes ~0.25 s to get there).
            init_wall = recording_start_s(rec)
            if init_wall is not None and 0 <= init_wall - played.t0_wall < 10:
                t0 += init_wall - played.t0_wall
                played.t0_wall = init_wall
            pids = {}
            for e in entries:
                delay = t0 + e["at"] - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                else:
                    played.max_late_s = max(played.max_late_s, -delay)
                c = e["conn"]
                if e.get("close"):
                    if c in conns:
                        conns.pop(c).close()
                    continue
                msg = dict(e["msg"])
                if msg.get("type") == "hello":
                    pids[c] = msg.get("pid")
                if msg.get("type") == "step":
                    msg["t_start"] = played.t0_wall + msg["t_start"]
                    msg["t_end"] = played.t0_wall + msg["t_end"]
                    played.steps_sent[pids.get(c)] = played.steps_sent.get(pids.get(c), 0) + 1
                if c not in conns:
                    conns[c] = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    conns[c].connect(sock)
                try:
                    conns[c].sendall((json.dumps(msg, separators=(",", ":")) + "\n").encode())
                except OSError as err_:
                    raise ReplayError("connection %d: %s (dropped by the agent?): %s"
                                      % (c, err_, _tail(err_path)))
            delay = t0 + duration_s - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        finally:
            for s in conns.values():
                s.close()
            if proc.poll() is None:
                time.sleep(0.15)  # the agent notices the closed connections before it stops
                proc.send_signal(signal.SIGTERM)
            try:
                played.agent_rc = proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                raise ReplayError("the agent did not stop within 30 s of SIGTERM")
    played.agent_err = _tail(err_path)
    if played.agent_rc != 0:
        raise ReplayError("the agent exited %s: %s" % (played.agent_rc, played.agent_err))
    return played, rec


def recording_start_s(rec):
    """The recording's start_time_ms in seconds (committed when the file was created)."""
    try:
        db = sqlite3.connect("file:%s?mode=ro" % rec, uri=True, timeout=2)
        try:
            row = db.execute("SELECT value FROM meta WHERE key = 'start_time_ms'").fetchone()
        finally:
            db.close()
        return int(row[0]) / 1000.0 if row else None
    except (sqlite3.Error, ValueError):
        return None


def _tail(path, n=600):
    try:
        with open(path, errors="replace") as f:
            return f.read()[-n:].strip()
    except OSError:
        return ""


def recorded_steps(gpumon, rec):
    """Steps per pid in the recording (gpumon export --steps)."""
    out = subprocess.run([gpumon, "export", rec, "--steps", "--format", "jsonl"],
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise ReplayError("gpumon export --steps failed: " + out.stderr.strip())
    counts = {}
    for line in out.stdout.splitlines():
        pid = json.loads(line)["pid"]
        counts[pid] = counts.get(pid, 0) + 1
    return counts


def check_recorded(gpumon, rec, played):
    """The recording holds every step that was sent (the harness worked)."""
    got = recorded_steps(gpumon, rec)
    if got != played.steps_sent:
        raise ReplayError("steps sent per pid %s, recorded %s" % (played.steps_sent, got))
