# SPDX-License-Identifier: MIT
"""Provokes real CUDA out-of-memory errors under gpumon and checks the forensics bundles
(docs/python.md, "OOM forensics"). For the GPU machine (torch with CUDA, Python 3.12).

usage (from the repository root, after building gpumon and the _gpumon module for this python):
    cmake -S . -B build -G Ninja -DGPUMON_PYTHON=$(command -v python3)
    cmake --build build --target gpumon gpumon_python
    PYTHONPATH=$PWD/python python3 tools/device/oom_h200.py [--out DIR] [--device N]

Starts `gpumon agent -o DIR/oom.gpumon`, then runs three children that allocate 1 GiB tensors
until the allocator fails: `with mon.step():` uncaught (observer + with exit + excepthook),
a plain loop uncaught (observer + excepthook), and a loop that catches the OOM and calls
mon.oom_report(e). Prints one line per check and a JSON summary; exit status 0 when all pass.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
GIB = 1 << 30


def child(mode, device):
    import torch
    import gpumon
    torch.cuda.set_device(device)
    mon = gpumon.start()
    assert mon.active, "gpumon is not active (no agent?)"
    held = []
    for i in mon.wrap(range(1000000)):
        if mode == "with":
            with mon.step():
                held.append(torch.empty(GIB, dtype=torch.uint8, device="cuda"))
        elif mode == "plain":
            held.append(torch.empty(GIB, dtype=torch.uint8, device="cuda"))
            mon.step()
        else:
            with mon.step():
                try:
                    held.append(torch.empty(GIB, dtype=torch.uint8, device="cuda"))
                except torch.cuda.OutOfMemoryError as e:
                    print("report", mon.oom_report(e), flush=True)
                    held.clear()
                    break
    mon.close()
    print("survived", i, flush=True)


def check(results, name, ok, detail=""):
    results.append({"check": name, "ok": bool(ok), "detail": str(detail)[:300]})
    print("%s %s %s" % ("PASS" if ok else "FAIL", name, detail if not ok else ""), flush=True)


def run(mode, out, env, device, results):
    folder = os.path.join(out, mode)
    os.makedirs(folder, exist_ok=True)
    env = dict(env, GPUMON_OOM_DIR=folder)
    t0 = time.time()
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", mode,
                        "--device", str(device)], env=env, capture_output=True, text=True,
                       timeout=300)
    with open(os.path.join(folder, "child.log"), "w") as log:
        log.write(r.stdout + "\n--- stderr ---\n" + r.stderr)
    bundles = glob.glob(os.path.join(folder, "gpumon-oom-*.json"))
    check(results, mode + ": exit status", (r.returncode == 0) == (mode == "caught"),
          "rc %d" % r.returncode)
    check(results, mode + ": one bundle", len(bundles) == 1, bundles)
    if len(bundles) != 1:
        return
    path = bundles[0]
    b = json.load(open(path))
    check(results, mode + ": stderr line", "gpumon: CUDA out of memory on cuda:%d" % device in
          r.stderr and "forensics in " + path in r.stderr, r.stderr[-500:])
    if mode != "caught" and sys.version_info >= (3, 11):
        check(results, mode + ": note", "gpumon: OOM forensics in " + path in r.stderr)
    check(results, mode + ": mode 0600", oct(os.stat(path).st_mode & 0o777) == "0o600")
    check(results, mode + ": requested 1 GiB", b["requested_bytes"] == GIB,
          (b["requested_bytes"], b["requested_bytes_source"]))
    check(results, mode + ": observer used", b["requested_bytes_source"] == "observer",
          b["requested_bytes_source"])
    check(results, mode + ": free < 1 GiB <= total", b["free_bytes"] is not None and
          b["total_bytes"] and b["free_bytes"] < GIB <= b["total_bytes"],
          (b["free_bytes"], b["total_bytes"]))
    check(results, mode + ": memory_stats", (b["memory_stats"] or {}).get("num_ooms", 0) >= 1,
          b["errors"])
    check(results, mode + ": pci bus id", b["pci_bus_id"] is not None, b["pci_bus_id"])
    check(results, mode + ": nvml gpu matched", b["nvml_gpu"] is not None,
          b["processes_unavailable"])
    check(results, mode + ": processes listed", isinstance(b["processes"], list),
          b["processes_unavailable"])
    mine = [p for p in b["processes"] or [] if p.get("pid") == int(b["pid"])]
    print("   own pid among the GPU's processes: %s (NVML gives host pids; a container without "
          "--pid=host differs)" % bool(mine))
    check(results, mode + ": snapshot", b["memory_snapshot"] and
          b["memory_snapshot"]["segments_kept"] > 0, b["errors"].get("memory_snapshot"))
    check(results, mode + ": last steps", len(b["last_steps"]) > 0, len(b["last_steps"]))
    check(results, mode + ": no errors", not b["errors"], b["errors"])
    print("   %s: %d bytes, %.1f s, fragmentation %s" % (
        path, os.path.getsize(path), time.time() - t0, json.dumps(b["fragmentation"])))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="oom-h200-out")
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--child", choices=("with", "plain", "caught"))
    a = ap.parse_args()
    if a.child:
        return child(a.child, a.device)
    binary = os.environ.get("GPUMON_BINARY") or os.path.join(REPO, "build", "gpumon")
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    sock, rec = os.path.join(out, "agent.sock"), os.path.join(out, "oom.gpumon")
    agent = subprocess.Popen([binary, "agent", "--socket", sock, "-o", rec],
                             stderr=open(os.path.join(out, "agent.log"), "w"))
    for _ in range(250):
        if os.path.exists(sock):
            break
        time.sleep(0.02)
    env = dict(os.environ, GPUMON_AGENT_SOCKET=sock, GPUMON_BINARY=binary,
               PYTHONPATH=os.path.join(REPO, "python"))
    results = []
    try:
        for mode in ("with", "plain", "caught"):
            run(mode, out, env, a.device, results)
    finally:
        agent.terminate()
        agent.wait(timeout=30)
    events = subprocess.check_output([binary, "export", rec, "--table", "rank_events",
                                      "--format", "jsonl"], text=True).splitlines()
    ooms = [json.loads(e) for e in events if json.loads(e)["kind"] == "oom"]
    check(results, "agent: three oom events with paths",
          len(ooms) == 3 and all(e["detail"].get("path") for e in ooms), ooms)
    hellos = [json.loads(e) for e in events if json.loads(e)["kind"] == "hello"]
    check(results, "agent: hello has the pci bus id",
          hellos and all(h["detail"].get("pci_bus_id") for h in hellos),
          [h["detail"] for h in hellos][:1])
    failed = [r for r in results if not r["ok"]]
    print(json.dumps({"passed": len(results) - len(failed), "failed": failed}, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
