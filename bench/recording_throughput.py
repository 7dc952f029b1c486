# SPDX-License-Identifier: MIT
"""How many training steps a recording agent takes without losing one (docs/PERFORMANCE.md,
"Recording throughput").

Starts `gpumon agent -o RUN --interval MS` on the fake NVML library, then RANKS processes that
each say hello and send RATE steps a second for SECONDS (in batches every 50 ms, as the clients
hand over), optionally beside one process flooding FLOOD steps as fast as the socket takes them.
Afterwards it counts what the recording holds against what was sent: steps per rank, GPU ticks
against the schedule, the agent's peak RSS, and the `steps_lost` rank events.

    bench/recording_throughput.py --gpumon build/gpumon --ranks 8 --rate 1000 --seconds 60
    bench/recording_throughput.py --gpumon build/gpumon --ranks 1 --rate 500 --flood 1000000
"""
import argparse
import json
import multiprocessing
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

STEP = ('{"type":"step","step":%d,"t_start":%.6f,"t_end":%.6f,"cpu_step_s":0.001,'
        '"gpu_step_s":0.001,"data_wait_s":0.0001,"mem":{"allocated":1024,"reserved":4096}}\n')


def hello(pid, rank):
    return json.dumps({"type": "hello", "v": 1, "pid": pid, "rank": rank, "local_rank": rank,
                       "world_size": 8, "device": "cuda:%d" % (rank % 8)}) + "\n"


def paced_rank(socket_path, rank, rate, seconds, start_at, sent):
    """Sends `rate` steps a second for `seconds`, batched every 50 ms; puts its count in `sent`."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(socket_path)
    s.sendall(hello(os.getpid(), rank).encode())
    while time.time() < start_at:
        time.sleep(0.001)
    n = 0
    t0 = time.monotonic()
    while True:
        elapsed = time.monotonic() - t0
        if elapsed >= seconds:
            break
        due = min(int(elapsed * rate), int(seconds * rate))
        if due > n:
            now = time.time()
            s.sendall("".join(STEP % (i, now - 0.001, now) for i in range(n, due)).encode())
            n = due
        time.sleep(0.05)
    due = int(seconds * rate)
    if due > n:
        now = time.time()
        s.sendall("".join(STEP % (i, now - 0.001, now) for i in range(n, due)).encode())
        n = due
    s.sendall(b'{"type":"bye"}\n')
    s.close()
    sent.put((os.getpid(), rank, n))


def flood(socket_path, count, start_at, sent):
    """Sends `count` steps as fast as the socket takes them."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(socket_path)
    s.sendall(hello(os.getpid(), 99).encode())
    while time.time() < start_at:
        time.sleep(0.001)
    now = time.time()
    block = 10000
    for first in range(0, count, block):
        s.sendall("".join(STEP % (i, now, now) for i in range(first, min(count, first + block)))
                  .encode())
    s.sendall(b'{"type":"bye"}\n')
    s.close()
    sent.put((os.getpid(), 99, count))


def peak_rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpumon", required=True)
    ap.add_argument("--fake-nvml", help="default: fake-nvml/libnvidia-ml.so.1 beside --gpumon")
    ap.add_argument("--scenario", default="demo")
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--rate", type=int, default=1000, help="steps a second, each rank")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--interval", type=int, default=100, help="the agent's sampling interval, ms")
    ap.add_argument("--flood", type=int, default=0, help="steps one extra client floods")
    ap.add_argument("--out", help="also write the JSON result here")
    args = ap.parse_args()

    fake = args.fake_nvml or os.path.join(os.path.dirname(os.path.abspath(args.gpumon)),
                                          "fake-nvml", "libnvidia-ml.so.1")
    work = tempfile.mkdtemp(prefix="gpumon-throughput-")
    sock = os.path.join(work, "agent.sock")
    run = os.path.join(work, "run.gpumon")
    env = dict(os.environ, GPUMON_NVML_LIBRARY=fake, GPUMON_FAKE_SCENARIO=args.scenario)
    log = open(os.path.join(work, "agent.log"), "w+")
    agent = subprocess.Popen([args.gpumon, "agent", "--socket", sock, "-o", run, "--interval",
                              str(args.interval)], env=env, stdout=log, stderr=log)
    deadline = time.time() + 30
    while not os.path.exists(sock) and time.time() < deadline and agent.poll() is None:
        time.sleep(0.05)
    if not os.path.exists(sock):
        log.seek(0)
        sys.exit("the agent did not listen: " + log.read()[-500:])

    sent = multiprocessing.Queue()
    start_at = time.time() + 1.0
    procs = [multiprocessing.Process(target=paced_rank,
                                     args=(sock, r, args.rate, args.seconds, start_at, sent))
             for r in range(args.ranks)]
    if args.flood:
        procs.append(multiprocessing.Process(target=flood, args=(sock, args.flood, start_at, sent)))
    for p in procs:
        p.start()
    results = [sent.get() for _ in procs]
    for p in procs:
        p.join()
    took = time.time() - start_at
    rss = peak_rss_kib(agent.pid)
    agent.send_signal(signal.SIGTERM)
    agent.wait(60)

    db = sqlite3.connect("file:%s?mode=ro" % run, uri=True)
    recorded = dict(db.execute("SELECT pid, count(*) FROM steps GROUP BY pid"))
    gpus = db.execute("SELECT count(*) FROM devices").fetchone()[0]
    ticks = db.execute("SELECT coalesce(sum(ticks), 0) FROM sample_chunks").fetchone()[0]
    span = db.execute("SELECT (max(last_time_ms) - min(first_time_ms)) / 1000.0 FROM sample_chunks").fetchone()[0]
    lost_events = {}
    for pid, detail in db.execute("SELECT pid, detail FROM rank_events "
                                  "WHERE kind = 'steps_lost'"):
        told = lost_events.setdefault(pid, {"pid": pid, "events": 0, "steps": 0})
        told["events"] += 1
        told["steps"] += json.loads(detail)["steps"]
        told["last_reason"] = json.loads(detail)["reason"]
    ranks = []
    for pid, rank, n in sorted(results, key=lambda r: r[1]):
        ranks.append({"rank": rank, "sent": n, "recorded": recorded.get(pid, 0),
                      "lost": n - recorded.get(pid, 0)})
    paced = [r for r in ranks if r["rank"] != 99]
    expected_ticks = gpus * (int(span * 1000 / args.interval) + 1) if span else 0
    log.seek(0)
    said = log.read()
    dropped = re.search(r"(\d+) items dropped", said)
    out = {
        "ranks": args.ranks, "rate": args.rate, "seconds": args.seconds, "flood": args.flood,
        "interval_ms": args.interval, "send_seconds": round(took, 2),
        "paced_steps_sent": sum(r["sent"] for r in paced),
        "paced_steps_lost": sum(r["lost"] for r in paced),
        "flood": next((r for r in ranks if r["rank"] == 99), None),
        "gpu_ticks_recorded": ticks, "gpu_ticks_expected": expected_ticks,
        "items_dropped": int(dropped.group(1)) if dropped else 0,
        "agent_peak_rss_mib": round(rss / 1024, 1) if rss else None,
        "steps_lost_events": list(lost_events.values()),
        "agent_log_tail": said[-600:],
    }
    text = json.dumps(out, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
