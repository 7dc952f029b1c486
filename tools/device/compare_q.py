#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compares `gpumon -q` with `nvidia-smi -q` taken just before it: the layout (labels,
indentation, order) line by line, and each value gpumon reads (not N/A) against nvidia-smi's.

usage: compare_q.py GPUMON.txt NVIDIA_SMI.txt   (prints a report; exit 1 if the layout differs)
"""
import sys


def lines(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return [l.rstrip("\n") for l in f if not l.startswith("rc=")]


def split(line):
    at = line.find(" : ")
    if at < 0:
        return line, None
    return line[:at + 3], line[at + 3:]


def main():
    ours, theirs = lines(sys.argv[1]), lines(sys.argv[2])
    layout, equal, differ, not_read = [], 0, [], 0
    for i, (a, b) in enumerate(zip(ours, theirs), 1):
        la, va = split(a)
        lb, vb = split(b)
        if la != lb:
            layout.append("line %d: gpumon %r, nvidia-smi %r" % (i, a, b))
            continue
        if va is None or la.lstrip().startswith("Timestamp"):
            continue
        if va == "N/A" and vb == "N/A":
            continue
        if va == "N/A":
            not_read += 1
        elif va == vb:
            equal += 1
        else:
            differ.append("%s gpumon %r, nvidia-smi %r" % (la.strip(" :"), va, vb))
    if len(ours) != len(theirs):
        layout.append("gpumon has %d lines, nvidia-smi %d" % (len(ours), len(theirs)))
    print("layout: %s" % ("identical" if not layout else "%d differences" % len(layout)))
    for l in layout[:20]:
        print("  " + l)
    print("values gpumon reads (both N/A left out): %d equal, %d differ; lines gpumon leaves N/A: %d"
          % (equal, len(differ), not_read))
    for d in differ:
        print("  " + d)
    return 1 if layout else 0


if __name__ == "__main__":
    sys.exit(main())
