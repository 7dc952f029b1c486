#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""What a recording holds, in a few lines per GPU and per rank, to check that a case plants
what it says (before or without `gpumon doctor`): utilization, SM activity, memory, clocks and
throttle reasons per GPU over the run's first and second half; steps, data-wait share, GPU/CPU
time and allocator stats per rank; events, processes and rank events.

usage: summarize_recording.py --gpumon build/gpumon RUN.gpumon [RUN.gpumon ...]
"""
import argparse
import json
import sqlite3
import subprocess
import sys

GIB = float(1 << 30)


def export(gpumon, rec, *extra):
    out = subprocess.run([gpumon, "export", rec, "--format", "jsonl"] + list(extra),
                         capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def fmt(x, spec="%.0f"):
    return "-" if x is None else spec % x


def summarize_gpus(rows):
    by_gpu = {}
    for r in rows:
        by_gpu.setdefault(r["gpu"], []).append(r)
    for gpu, rs in sorted(by_gpu.items()):
        half = len(rs) // 2
        parts = []
        for name, part in (("1st half", rs[:half]), ("2nd half", rs[half:])):
            reasons = sorted({r.get("clock_event_reasons") for r in part} - {None, 0})
            parts.append("%s: util %s%% sm %s mem %s-%s GiB clk %s-%s reasons %s" % (
                name, fmt(mean(r.get("utilization_gpu_pct") for r in part)),
                fmt(mean(r.get("sm_active_ratio") for r in part), "%.2f"),
                fmt(min((r.get("memory_used_bytes") or 0) for r in part) / GIB, "%.1f"),
                fmt(max((r.get("memory_used_bytes") or 0) for r in part) / GIB, "%.1f"),
                fmt(min((r.get("sm_clock_mhz") or 0) for r in part)),
                fmt(max((r.get("sm_clock_mhz") or 0) for r in part)), reasons or "-"))
        print("  gpu %d (%d ticks)  %s" % (gpu, len(rs), " | ".join(parts)))


def summarize_steps(steps):
    by_rank = {}
    for s in steps:
        by_rank.setdefault((s["rank"], s["pid"], s["device"]), []).append(s)
    for (rank, pid, device), ss in sorted(by_rank.items(), key=lambda x: str(x[0])):
        cpu = sum(s["cpu_step_s"] for s in ss)
        waited = [s for s in ss if s["data_wait_s"] is not None]  # null: not measured
        wait = sum(s["data_wait_s"] for s in waited)
        wait_cpu = sum(s["cpu_step_s"] for s in waited)
        gpu = [s["gpu_step_s"] for s in ss if s["gpu_step_s"] is not None]
        mem = [s for s in ss if s["allocated_bytes"] is not None]
        line = "  rank %s pid %s %s: %d steps, mean %.3f s, data wait %s, gpu/cpu %s" % (
            rank, pid, device, len(ss), cpu / len(ss),
            "%.0f%%" % (100 * wait / wait_cpu) if wait_cpu else "not measured",
            fmt(sum(gpu) / sum(s["cpu_step_s"] for s in ss if s["gpu_step_s"] is not None)
                if gpu else None, "%.2f"))
        if mem:
            a, b = mem[0], mem[-1]
            line += "; alloc %.2f -> %.2f GiB, reserved %.2f -> %.2f, inactive split %.2f -> " \
                    "%.2f, retries %s -> %s, ooms %s -> %s (%d samples)" % (
                        a["allocated_bytes"] / GIB, b["allocated_bytes"] / GIB,
                        a["reserved_bytes"] / GIB, b["reserved_bytes"] / GIB,
                        a["inactive_split_bytes"] / GIB, b["inactive_split_bytes"] / GIB,
                        a["num_alloc_retries"], b["num_alloc_retries"], a["num_ooms"],
                        b["num_ooms"], len(mem))
        print(line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpumon", required=True)
    ap.add_argument("recordings", nargs="+")
    args = ap.parse_args()
    for rec in args.recordings:
        print(rec)
        summarize_gpus(export(args.gpumon, rec))
        try:
            summarize_steps(export(args.gpumon, rec, "--steps"))
            for e in export(args.gpumon, rec, "--table", "rank_events"):
                if e["kind"] not in ("hello", "bye"):
                    print("  rank event %s pid %s %s %s" % (e["timestamp"], e["pid"], e["kind"],
                                                           json.dumps(e["detail"])[:80]))
        except subprocess.CalledProcessError:
            print("  (no steps table)")
        db = sqlite3.connect("file:%s?mode=ro" % rec, uri=True)
        for row in db.execute("SELECT gpu, time_ms, kind, value FROM events"):
            print("  event gpu %s at %s: %s %s" % row)
        for row in db.execute("SELECT gpu, pid, name, max_used_memory_bytes FROM processes"):
            print("  process gpu %s pid %s %s max %.1f GiB" % (row[0], row[1], row[2],
                                                               (row[3] or 0) / GIB))
        db.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
