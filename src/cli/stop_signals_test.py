# SPDX-License-Identifier: MIT
"""The real `gpumon` on the fake NVML under the signals a shared machine sends
(src/util/stop_signals.h): SIGHUP (a dropped terminal or SSH session) stops `serve` and
`agent` as SIGTERM does; `record -- CMD` passes it on to CMD and records until CMD exits; a
file-size limit (`ulimit -f`) stops the recording with a message instead of killing gpumon;
SIGTERM stops `agent` and `serve` within 5 s while an NVML call hangs.
Each ends with the recording closed (end_time) and no socket left behind. And kill -9, which
nothing catches: the main file, copied without its -wal, still holds the recording.
Standard library only.

usage: stop_signals_test.py --gpumon GPUMON --fake-nvml LIBRARY [--no-serve]
"""

import argparse
import glob
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "util", "testing"))
from wait_for import wait_for  # noqa: E402

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what, flush=True)
    return cond


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def meta(path):
    db = sqlite3.connect("file:" + path + "?mode=ro", uri=True)
    try:
        return dict(db.execute("SELECT key, value FROM meta"))
    finally:
        db.close()


def chunk_ticks(path, gpu=0):
    """Ticks of `gpu` committed so far (a file still being written: SQLite reads its WAL)."""
    try:
        db = sqlite3.connect("file:" + path + "?mode=ro", uri=True)
        try:
            return db.execute("SELECT coalesce(sum(ticks), 0) FROM sample_chunks WHERE gpu = ?",
                              (gpu,)).fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return 0


class Run:
    """`gpumon ARGS` with stderr in a file, in its own session as under a terminal."""

    def __init__(self, gpumon, env, d, name, args, fsize_limit=None):
        self.err_path = os.path.join(d, name + ".err")
        self.err = open(self.err_path, "w")

        def limit():
            if fsize_limit is not None:
                resource.setrlimit(resource.RLIMIT_FSIZE, (fsize_limit, fsize_limit))

        self.proc = subprocess.Popen([gpumon, *args], env=env, stdout=subprocess.DEVNULL,
                                     stderr=self.err, preexec_fn=limit, start_new_session=True)

    def stderr(self):
        return read(self.err_path)

    def wait(self):
        try:
            return self.proc.wait(timeout=60)  # only ends a hung test
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def stale_sockets(d):
    return glob.glob(os.path.join(d, "**", "*.sock"), recursive=True)


def test_hup_stops(gpumon, env, d, command, extra):
    rec = os.path.join(d, command + ".gpumon")
    sock = os.path.join(d, command + ".sock")
    args = [command, "--interval", "100", *extra(rec, sock)]
    r = Run(gpumon, env, d, command, args)
    check(wait_for(lambda: chunk_ticks(rec) > 0), command + ": nothing recorded")
    r.proc.send_signal(signal.SIGHUP)
    rc = r.wait()
    check(rc == 0, "%s: SIGHUP gave rc %s, not a clean stop (0): %s" % (command, rc, r.stderr()))
    check("end_time" in meta(rec), command + ": the recording was not closed (no end_time)")
    check(not os.path.exists(sock), command + ": the socket was left behind")


HUNG_SCENARIO = """{"device_template": {}, "repeat_devices": 2, "devices": [{}, {"latency_us":
    {"nvmlDeviceGetTemperature": {"us": 60000000, "mode": "sleep"}}}]}"""


def test_term_with_hung_call(gpumon, env, d, command, extra):
    """GPU 1's temperature call sleeps a minute from the first tick on: GPU 0 is still recorded
    every tick, and SIGTERM stops the command within 5 s (systemd's stop timeout is 20 s)."""
    scenario = os.path.join(d, "hung.json")
    with open(scenario, "w") as f:
        f.write(HUNG_SCENARIO)
    rec = os.path.join(d, command + "-hung.gpumon")
    sock = os.path.join(d, command + "-hung.sock")
    r = Run(gpumon, dict(env, GPUMON_FAKE_SCENARIO=scenario), d, command + "-hung",
            [command, "--interval", "100", *extra(rec, sock)])
    check(wait_for(lambda: chunk_ticks(rec, gpu=0) >= 20),
          command + ": GPU 0 was not sampled while GPU 1 hung: " + r.stderr())
    check(wait_for(lambda: "GPU 1: nvmlDeviceGetTemperature has not returned" in r.stderr()),
          command + ": the hung call was not logged: " + r.stderr())
    start = time.monotonic()
    r.proc.send_signal(signal.SIGTERM)
    rc = r.wait()
    took = time.monotonic() - start
    check(rc == 0, "%s: SIGTERM with a hung call gave rc %s: %s" % (command, rc, r.stderr()))
    check(took <= 5, "%s: SIGTERM with a hung call took %.1f s to stop (at most 5)" % (command, took))
    check("end_time" in meta(rec), command + ": the hung run's recording was not closed")
    check(not os.path.exists(sock), command + ": the hung run's socket was left behind")


def test_record_passes_hup_on(gpumon, env, d):
    rec = os.path.join(d, "hup.gpumon")
    got_hup = os.path.join(d, "got-hup")
    go = os.path.join(d, "go")
    # The command survives a HUP (as `nohup` training would), says it got it, and exits 7
    # when told to.
    script = 'trap "touch %s" HUP; while [ ! -e %s ]; do sleep 0.05; done; exit 7' % (got_hup, go)
    r = Run(gpumon, env, d, "record-hup", ["record", "-o", rec, "--interval", "100", "--",
                                           "sh", "-c", script])
    check(wait_for(lambda: chunk_ticks(rec) > 0), "record: nothing recorded")
    r.proc.send_signal(signal.SIGHUP)
    check(wait_for(lambda: os.path.exists(got_hup)), "record did not pass SIGHUP on")
    check(r.proc.poll() is None, "record stopped on SIGHUP while its command runs")
    ticks = chunk_ticks(rec)
    check(wait_for(lambda: chunk_ticks(rec) > ticks), "record stopped recording after SIGHUP")
    open(go, "w").close()
    rc = r.wait()
    check(rc == 7, "record returned %s, not the command's 7: %s" % (rc, r.stderr()))
    check("SIGHUP passed on to the command; recording until it exits" in r.stderr(),
          "record did not say it passed SIGHUP on: " + r.stderr())
    check("end_time" in meta(rec), "record: the recording was not closed (no end_time)")


def test_record_file_size_limit(gpumon, env, d):
    # The limit leaves room for the new file (about 48 KiB, and as much again in the WAL while
    # it is created) and is reached by the WAL within a few commits, before any checkpoint.
    rec = os.path.join(d, "fsize.gpumon")
    go = os.path.join(d, "go-fsize")
    script = "while [ ! -e %s ]; do sleep 0.05; done" % go
    r = Run(gpumon, env, d, "record-fsize",
            ["record", "-o", rec, "--interval", "10", "--", "sh", "-c", script],
            fsize_limit=96 * 1024)
    check(wait_for(lambda: "recording stopped" in r.stderr() or r.proc.poll() is not None),
          "the file-size limit never stopped the recording")
    check(r.proc.poll() is None,
          "record died (rc %s) at the file-size limit: %s" % (r.proc.poll(), r.stderr()))
    open(go, "w").close()
    rc = r.wait()
    check(rc == 0, "record returned %s, not the command's 0: %s" % (rc, r.stderr()))
    check("file size limit (ulimit -f) reached: recording stopped at" in r.stderr(),
          "no file-size message: " + r.stderr())
    check(chunk_ticks(rec) > 0, "the file does not hold what was written before the limit")


def main_file_alone(gpumon, env, rec, copy):
    """Copies the main file of `rec` without its -wal and exports it: (ticks, stderr), or
    (None, stderr) when it cannot be read."""
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(copy + suffix):
            os.remove(copy + suffix)
    shutil.copyfile(rec, copy)
    p = subprocess.run([gpumon, "export", copy, "--format", "csv", "--gpu", "0"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        return None, p.stderr
    return len(p.stdout.splitlines()) - 1, p.stderr


def test_killed_recording_main_file(gpumon, env, d):
    """A recording killed with -9 lives mostly in its main file: the writer checkpoints the WAL,
    so the main file copied alone opens, says what is missing, and holds the data up to the
    last checkpoint."""
    rec = os.path.join(d, "killed.gpumon")
    copy = os.path.join(d, "main-only.gpumon")
    r = Run(gpumon, env, d, "killed", ["record", "-o", rec, "--interval", "50"])
    check(wait_for(lambda: chunk_ticks(rec) > 0), "killed: nothing recorded")
    # A copy taken while a checkpoint writes into the main file can be torn (as any copy of a
    # file being written): the copy is retried until one holds 40 ticks.
    check(wait_for(lambda: (main_file_alone(gpumon, env, rec, copy)[0] or 0) >= 40),
          "the main file alone never held 40 ticks: the WAL is not checkpointed: " +
          main_file_alone(gpumon, env, rec, copy)[1])
    r.proc.kill()
    r.wait()
    ticks, err = main_file_alone(gpumon, env, rec, copy)
    check(ticks is not None and ticks >= 40, "the main file of the killed run: %s %s" % (ticks, err))
    check("the recording was not closed and its -wal file is missing" in err,
          "export does not say the -wal file is missing: " + err)
    check(ticks is None or chunk_ticks(rec) >= ticks, "main file and WAL together hold less")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpumon", required=True)
    ap.add_argument("--fake-nvml", required=True)
    ap.add_argument("--no-serve", action="store_true", help="a build without `gpumon serve`")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, GPUMON_NVML_LIBRARY=a.fake_nvml, GPUMON_FAKE_SCENARIO="demo",
                   XDG_RUNTIME_DIR=d)
        test_hup_stops(a.gpumon, env, d, "agent",
                       lambda rec, sock: ["-o", rec, "--socket", sock])
        if not a.no_serve:
            test_hup_stops(a.gpumon, env, d, "serve",
                           lambda rec, sock: ["--listen", "127.0.0.1:0", "--record", rec,
                                              "--agent-socket", sock])
        test_term_with_hung_call(a.gpumon, env, d, "agent",
                                 lambda rec, sock: ["-o", rec, "--socket", sock])
        if not a.no_serve:
            test_term_with_hung_call(a.gpumon, env, d, "serve",
                                     lambda rec, sock: ["--listen", "127.0.0.1:0", "--record",
                                                        rec, "--agent-socket", sock])
        test_record_passes_hup_on(a.gpumon, env, d)
        test_record_file_size_limit(a.gpumon, env, d)
        test_killed_recording_main_file(a.gpumon, env, d)
        check(not stale_sockets(d), "sockets left behind: %s" % stale_sockets(d))
    if FAILURES:
        return 1
    print("stop signals: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
