# SPDX-License-Identifier: MIT
"""The Python half of tools/device/validate_h200.sh, one subcommand each:

  strip SRC DST          a copy of examples/train_plain.py or train_lightning.py without its
                         gpumon lines (zero-code instrumentation runs it unchanged otherwise);
                         fails when an expected line is missing (the example changed)
  leak --dir D --out J   a loop that keeps a new 64 MiB CUDA tensor every step, under
                         gpumon.start(oom_dir=D, allocator_interval_s=0): memory_leak (and
                         oom_forecast) reach it from the agent and the memory capture writes
                         D/gpumon-memory-*.txt and .pickle; runs until the snapshot is dumped
                         (+5 steps) or --max-steps / --max-seconds, then checks the pickle
                         (pickle.load: 'segments', 'device_traces') and opens it with
                         torch.cuda._memory_viz (trace_plot, segment_plot); summary into J
  crash --how H --at N   a small CUDA training loop with gpumon.start() that raises
                         (H=exception) or SIGKILLs itself (H=sigkill) at step N
  summarize --out J [--include NAME=FILE.json]... NAME=FILE.gpumon...
                         steps (gpumon export --table steps) and findings (gpumon doctor
                         --json) of each recording, NAME-auto beside NAME-explicit compared,
                         and the included JSON files, into J

--device cpu (the default without CUDA) runs the same on the CPU for a dry run (no capture then).
Environment: PYTHONPATH=<repo>/python, GPUMON_BINARY=<build>/gpumon.
"""
import argparse
import glob
import json
import os
import pickle
import re
import subprocess
import sys
import time

MiB = 1 << 20


def dump(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True, default=str)
        f.write("\n")
    print(json.dumps(obj, sort_keys=True, default=str)[:1500], flush=True)


# ---- strip -------------------------------------------------------------------------------

# (old, new) pairs per example; each old must occur exactly once.
STRIP = {
    "train_plain.py": [
        ("import gpumon\n", ""),
        ("mon = gpumon.start()", "pass"),
        ("mon.wrap(loader)", "loader"),
        ("    mon.step()", "    pass"),
        ('sent = mon.stats().get("sent")', "sent = None"),
        ("mon.close()\n", ""),
    ],
    "train_lightning.py": [
        ("from gpumon.lightning import GpumonCallback\n", ""),
        ("callback = GpumonCallback()", 'callback = type("NoCallback", (), {"monitor": None})()'),
        ("callbacks=[callback]", "callbacks=[]"),
    ],
}


def cmd_strip(a):
    text = open(a.src).read()
    name = os.path.basename(a.src)
    if name not in STRIP:
        sys.exit("strip: no rules for %s" % name)
    for old, new in STRIP[name]:
        n = text.count(old)
        if n != 1:
            sys.exit("strip: %r occurs %d times in %s (the example changed)" % (old, n, a.src))
        text = text.replace(old, new)
    left = re.findall(r".*(?:\bmon\.|import gpumon|from gpumon|Gpumon).*", text)
    if left:
        sys.exit("strip: gpumon calls left in %s: %s" % (a.src, left))
    with open(a.dst, "w") as f:
        f.write(text)
    print("strip: %s -> %s" % (a.src, a.dst))


# ---- leak --------------------------------------------------------------------------------

def cmd_leak(a):
    import torch
    import gpumon

    dev = torch.device(a.device)
    os.makedirs(a.dir, exist_ok=True)
    seen = []  # (time since start, state, id) of each finding event
    t0 = time.time()
    mon = gpumon.start(oom_dir=a.dir, allocator_interval_s=0.0,
                       capture_history_steps=a.history_steps)
    mon.on_finding(lambda e: seen.append((round(time.time() - t0, 2), e.get("state"),
                                          e.get("id"))))
    w = torch.randn(2048, 2048, device=dev)
    kept = []  # the leak: a history kept by mistake
    pid = os.getpid()
    dumped_at = None
    step = 0
    while step < a.max_steps and time.time() - t0 < a.max_seconds:
        (w @ w).sum().item()  # a little work, and a sync
        kept.append(torch.empty(a.leak_mib * MiB // 4, device=dev).fill_(float(step)))
        time.sleep(a.sleep_ms / 1000.0)
        mon.step()
        step += 1
        if dumped_at is None:
            pickles = glob.glob(os.path.join(a.dir, "gpumon-memory-%d-*.pickle" % pid))
            if any(os.path.getsize(p) > 0 for p in pickles):
                dumped_at = step
        elif step >= dumped_at + 5:
            break
    elapsed = time.time() - t0
    findings_live = [f.get("id") for f in mon.findings()]
    active = mon.active
    mon.close()  # dumps a window still open
    out = {"device": str(dev), "torch": torch.__version__, "steps": step,
           "seconds": round(elapsed, 2), "leaked_gib": round(len(kept) * a.leak_mib / 1024, 2),
           "leak_mib_per_step": a.leak_mib, "sleep_ms": a.sleep_ms,
           "monitor_active": active, "finding_events": seen,
           "findings_at_end": findings_live, "snapshot_dumped_at_step": dumped_at,
           "history_steps": a.history_steps}
    files = sorted(glob.glob(os.path.join(a.dir, "gpumon-memory-%d-*" % pid)))
    out["files"] = [{"name": os.path.basename(p), "bytes": os.path.getsize(p),
                     "mode": oct(os.stat(p).st_mode & 0o777)} for p in files]
    summaries = [p for p in files if p.endswith(".txt")]
    if summaries:
        with open(summaries[0]) as f:
            text = f.read()
        out["summary_head"] = [line for line in text.splitlines() if line.strip()][:4]
        out["summary_names_allocated"] = "Allocated memory" in text
    out["pickles"] = [check_pickle(p, a.html_dir) for p in files if p.endswith(".pickle")]
    out["ok"] = bool(summaries) and any(p.get("ok") for p in out["pickles"])
    del kept
    dump(a.out, out)


def check_pickle(path, html_dir):
    """pickle.load, then 'segments' and 'device_traces' with entries; memory_viz's plots."""
    r = {"name": os.path.basename(path), "bytes": os.path.getsize(path)}
    try:
        with open(path, "rb") as f:
            snap = pickle.load(f)
    except Exception as e:
        r["load_error"] = repr(e)
        r["ok"] = False
        return r
    r["type"] = type(snap).__name__
    if isinstance(snap, dict):
        r["keys"] = sorted(snap)
        segs = snap.get("segments") or []
        traces = snap.get("device_traces") or []
        r["segments"] = len(segs)
        r["device_traces"] = [len(t) for t in traces]
        events = [e for t in traces for e in t]
        r["trace_actions"] = sorted({e.get("action") for e in events if isinstance(e, dict)})
        r["alloc_sizes_mib"] = sorted({round(e.get("size", 0) / MiB, 1) for e in events
                                       if isinstance(e, dict) and e.get("action") == "alloc"})[-5:]
        r["has_python_frames"] = any(e.get("frames") for e in events if isinstance(e, dict))
        r["ok"] = bool(segs) and bool(events)
    else:
        r["ok"] = False
    viz = None
    try:
        from torch.cuda import _memory_viz as viz
    except Exception as e:
        r["memory_viz"] = "not importable: %r" % (e,)
    if viz is not None and isinstance(snap, dict):
        for fn_name in ("trace_plot", "segment_plot"):
            fn = getattr(viz, fn_name, None)
            if fn is None:
                r[fn_name] = "absent"
                continue
            try:
                html = fn(snap)
                r[fn_name] = {"ok": isinstance(html, str) and len(html) > 0,
                              "chars": len(html) if isinstance(html, str) else None}
                if html_dir and isinstance(html, str) and len(html) < 8 * MiB:
                    os.makedirs(html_dir, exist_ok=True)
                    with open(os.path.join(html_dir, "%s.html" % fn_name), "w") as f:
                        f.write(html)
            except Exception as e:
                r[fn_name] = {"ok": False, "error": repr(e)[:500]}
    return r


# ---- crash -------------------------------------------------------------------------------

def cmd_crash(a):
    import torch
    import gpumon

    dev = torch.device(a.device)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(256, 1024, device=dev)
    y = torch.randint(0, 10, (256,), device=dev)
    mon = gpumon.start()
    print("crash: monitor active", mon.active, "device", dev, flush=True)
    for step in range(a.at + 1000):
        if step == a.at:
            if a.how == "sigkill":
                print("crash: SIGKILL at step", step, flush=True)
                os.kill(os.getpid(), 9)
            raise RuntimeError("validate_h200: planted failure at step %d" % step)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        loss.item()
        time.sleep(a.sleep_ms / 1000.0)
        mon.step()


# ---- summarize ---------------------------------------------------------------------------

def gpumon_json(args):
    binary = os.environ.get("GPUMON_BINARY", "gpumon")
    p = subprocess.run([binary] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def summarize_one(path):
    r = {"file": os.path.basename(path)}
    if not os.path.exists(path):
        r["error"] = "no recording"
        return r
    r["bytes"] = os.path.getsize(path)
    rc, text, err = gpumon_json(["export", path, "--table", "steps", "--format", "jsonl"])
    steps = [json.loads(line) for line in text.splitlines() if line.strip().startswith("{")]
    if rc != 0:
        r["export_error"] = err.strip()[-500:]
    r["steps"] = len(steps)
    pids = {}
    for s in steps:
        pids[s.get("pid")] = pids.get(s.get("pid"), 0) + 1
    r["steps_per_pid"] = {str(k): v for k, v in pids.items()}
    r["step_devices"] = sorted({str(s.get("device")) for s in steps})
    r["steps_with_gpu_step_s"] = sum(s.get("gpu_step_s") is not None for s in steps)
    r["steps_with_allocated_bytes"] = sum(s.get("allocated_bytes") is not None for s in steps)
    r["steps_with_data_wait"] = sum(bool(s.get("data_wait_s")) for s in steps)
    if steps:
        r["step_numbers"] = [steps[0].get("step"), steps[-1].get("step")]
        cpu = sorted(s.get("cpu_step_s") or 0 for s in steps)
        r["median_cpu_step_ms"] = round(1e3 * cpu[len(cpu) // 2], 3)
    rc, text, err = gpumon_json(["doctor", path, "--json"])
    try:
        d = json.loads(text)
        r["health_score"] = d.get("health_score")
        r["findings"] = [f.get("id") for f in d.get("findings", [])]
        r["findings_severity"] = {f.get("id"): f.get("severity") for f in d.get("findings", [])}
        r["not_judged"] = [n.get("check") for n in d.get("not_judged", [])]
        for f in d.get("findings", []):
            if f.get("id") == "run_failed":
                r["run_failed_evidence"] = f.get("evidence")
                r["run_failed_summary"] = f.get("summary")
            if f.get("id") in ("memory_leak", "oom_forecast"):
                ev = f.get("evidence") or {}
                r["%s_capture_files" % f["id"]] = {
                    k: ev.get(k) for k in ("allocator_summary_file", "allocation_history_file")}
    except ValueError:
        r["doctor_error"] = (err or text).strip()[-500:]
    return r


def cmd_summarize(a):
    out = {}
    for item in a.recordings:
        name, _, path = item.partition("=")
        out[name] = summarize_one(path)
    pairs = {}  # zero-code against instrumented: NAME-auto beside NAME-explicit
    for name in out:
        if name.endswith("-auto") and name[:-5] + "-explicit" in out:
            auto, expl = out[name], out[name[:-5] + "-explicit"]
            fa, fe = set(auto.get("findings") or []), set(expl.get("findings") or [])
            pairs[name[:-5]] = {"steps_auto": auto.get("steps"),
                                "steps_explicit": expl.get("steps"),
                                "steps_equal": auto.get("steps") == expl.get("steps"),
                                "findings_equal": fa == fe,
                                "findings_only_auto": sorted(fa - fe),
                                "findings_only_explicit": sorted(fe - fa)}
    if pairs:
        out["zero_code_vs_explicit"] = pairs
    for item in a.include:
        name, _, path = item.partition("=")
        try:
            with open(path) as f:
                out[name] = json.load(f)
        except (OSError, ValueError) as e:
            out[name] = {"error": repr(e)}
    dump(a.out, out)


def main():
    try:
        import torch
        default_device = "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:
        default_device = "cpu"
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("strip")
    s.add_argument("src")
    s.add_argument("dst")
    s = sub.add_parser("leak")
    s.add_argument("--dir", required=True, help="oom_dir: where the capture's files go")
    s.add_argument("--out", required=True)
    s.add_argument("--html-dir", default=None, help="memory_viz's HTML pages go here")
    s.add_argument("--device", choices=("cpu", "cuda"), default=default_device)
    s.add_argument("--leak-mib", type=int, default=64)
    s.add_argument("--sleep-ms", type=float, default=40.0)
    s.add_argument("--max-steps", type=int, default=500)
    s.add_argument("--max-seconds", type=float, default=45.0)
    s.add_argument("--history-steps", type=int, default=20)
    s = sub.add_parser("crash")
    s.add_argument("--how", choices=("exception", "sigkill"), required=True)
    s.add_argument("--at", type=int, default=30)
    s.add_argument("--sleep-ms", type=float, default=20.0)
    s.add_argument("--device", choices=("cpu", "cuda"), default=default_device)
    s = sub.add_parser("summarize")
    s.add_argument("--out", required=True)
    s.add_argument("--include", action="append", default=[],
                   help="NAME=FILE.json: that JSON under NAME in the summary")
    s.add_argument("recordings", nargs="*", help="NAME=FILE.gpumon")
    a = p.parse_args()
    {"strip": cmd_strip, "leak": cmd_leak, "crash": cmd_crash,
     "summarize": cmd_summarize}[a.cmd](a)


if __name__ == "__main__":
    main()
