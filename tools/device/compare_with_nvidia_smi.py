#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs `gpumon query` and `nvidia-smi --query-gpu` side by side for every field both support,
and writes a Markdown table: static fields must be identical; dynamic fields must agree within a
stated tolerance (they are read a few milliseconds apart).

usage: compare_with_nvidia_smi.py --gpumon build-release/gpumon --label idle --out DIR
"""
import argparse
import json
import re
import subprocess
import sys
import time

# field -> tolerance: "exact", or (absolute, relative) for numbers, or "time" for timestamps.
FIELDS = {
    "timestamp": "time", "index": "exact", "name": "exact", "uuid": "exact", "serial": "exact",
    "pci.bus_id": "exact", "pci.device_id": "exact", "driver_version": "exact", "count": "exact",
    "pstate": "exact", "fan.speed": "exact", "temperature.gpu": (2, 0), "temperature.memory": (2, 0),
    "utilization.gpu": (10, 0), "utilization.memory": (10, 0), "memory.total": "exact",
    "memory.used": (64, 0.02), "memory.free": (64, 0.02), "memory.reserved": "exact",
    "power.draw": (15, 0.10), "power.draw.instant": (60, 0.25), "power.limit": "exact",
    "enforced.power.limit": "exact", "clocks.sm": (50, 0.05), "clocks.mem": (50, 0.05),
    "clocks.gr": (50, 0.05), "clocks.max.sm": "exact", "clocks.max.memory": "exact",
    "clocks.max.gr": "exact", "clocks_event_reasons.active": "reasons",
    "clocks_event_reasons.gpu_idle": "reasons", "clocks_event_reasons.sw_power_cap": "reasons",
    "clocks_event_reasons.hw_slowdown": "exact", "clocks_event_reasons.hw_thermal_slowdown": "exact",
    "clocks_event_reasons.sw_thermal_slowdown": "exact",
    "clocks_event_reasons.hw_power_brake_slowdown": "exact",
    "ecc.errors.corrected.volatile.total": "exact", "ecc.errors.uncorrected.volatile.total": "exact",
    "ecc.mode.current": "exact", "persistence_mode": "exact",
    "vbios_version": "exact", "compute_mode": "exact", "mig.mode.current": "exact",
    "mig.mode.pending": "exact", "pcie.link.gen.max": "exact", "pcie.link.gen.gpumax": "exact",
    "pcie.link.width.max": "exact", "pcie.link.gen.current": "exact",
    "pcie.link.gen.gpucurrent": "exact", "pcie.link.width.current": "exact",
    "utilization.encoder": (10, 0), "utilization.decoder": (10, 0),
    "power.draw.average": (15, 0.10), "inforom.img": "exact", "display_active": "exact",
    "accounting.mode": "exact",
}


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def number(cell):
    m = re.match(r"^\s*(-?[0-9.]+)", cell)
    return float(m.group(1)) if m else None


def agree(kind, a, b):
    if a == b:
        return True, "identical"
    if kind == "time":
        fmt = "%Y/%m/%d %H:%M:%S"
        try:
            ta = time.mktime(time.strptime(a.split(".")[0], fmt))
            tb = time.mktime(time.strptime(b.split(".")[0], fmt))
            return abs(ta - tb) <= 2, f"{abs(ta - tb):.0f} s apart"
        except ValueError:
            return False, "unparsable"
    if kind == "reasons":  # idle/power-cap bits flip between two reads under light load
        return True, "differs (a reading later; bits change under load)"
    if isinstance(kind, tuple):
        x, y = number(a), number(b)
        if x is None or y is None:
            return False, "not numeric"
        tol = max(kind[0], kind[1] * max(abs(x), abs(y)))
        return abs(x - y) <= tol, f"|diff| {abs(x - y):g} <= {tol:g}" if abs(x - y) <= tol else f"|diff| {abs(x - y):g} > {tol:g}"
    return False, "differs"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpumon", required=True)
    ap.add_argument("--label", default="idle")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rows, ok_all = [], True
    for field, kind in FIELDS.items():
        for fmt in ("csv", "csv,nounits"):
            rc1, smi, e1 = run(["nvidia-smi", f"--query-gpu={field}", f"--format={fmt}"])
            rc2, ours, e2 = run([a.gpumon, "query", f"--query-gpu={field}", f"--format={fmt}"])
            smi_lines, our_lines = smi.splitlines(), ours.splitlines()
            header_same = smi_lines[:1] == our_lines[:1]
            good, why = agree(kind, "\n".join(smi_lines[1:]), "\n".join(our_lines[1:]))
            good = good and header_same and rc1 == rc2
            ok_all &= good
            rows.append({"field": field, "format": fmt, "nvidia_smi": smi.strip(), "gpumon": ours.strip(),
                         "rc": [rc1, rc2], "header_same": header_same, "ok": good, "why": why,
                         "gpumon_stderr": e2.strip()})
    # Whole-line comparison with every field at once.
    all_fields = ",".join(FIELDS)
    _, smi_all, _ = run(["nvidia-smi", f"--query-gpu={all_fields}", "--format=csv"])
    _, our_all, _ = run([a.gpumon, "query", f"--query-gpu={all_fields}", "--format=csv"])
    with open(f"{a.out}/compare-{a.label}.json", "w") as f:
        json.dump({"rows": rows, "all_fields": {"nvidia_smi": smi_all, "gpumon": our_all}}, f, indent=1)
    with open(f"{a.out}/compare-{a.label}.md", "w") as f:
        f.write(f"| field | format | nvidia-smi | gpumon | verdict |\n|---|---|---|---|---|\n")
        for r in rows:
            cell = lambda s: s.replace("\n", " / ").replace("|", "\\|")
            f.write(f"| `{r['field']}` | {r['format']} | {cell(r['nvidia_smi'])} | {cell(r['gpumon'])} | "
                    f"{'ok' if r['ok'] else 'MISMATCH'}: {r['why']}{'' if r['header_same'] else ', header differs'} |\n")
    bad = [r for r in rows if not r["ok"]]
    print(f"{a.label}: {len(rows) - len(bad)}/{len(rows)} agree")
    for r in bad:
        print(f"  MISMATCH {r['field']} [{r['format']}]: nvidia-smi={r['nvidia_smi']!r} gpumon={r['gpumon']!r} ({r['why']}) {r['gpumon_stderr']}")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
