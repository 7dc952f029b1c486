#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Writes the synthetic labelled cases into testdata/diagnoses/<case>/ (scenario.json,
steps.ndjson, case.json, expected.json) from the definitions in cases_*.py. The output is
deterministic (seeded): rerunning it on an unchanged definition changes no file.

usage: make_cases.py [--out DIR] [--case NAME ...] [--list]
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import cases_compute  # noqa: E402
import cases_hardware  # noqa: E402
import cases_healthy  # noqa: E402
import cases_memory  # noqa: E402
import cases_multi  # noqa: E402
from case_model import write_case  # noqa: E402

ALL = (cases_healthy.CASES + cases_compute.CASES + cases_memory.CASES + cases_multi.CASES
       + cases_hardware.CASES)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(HERE, "..", "..", "testdata", "diagnoses"))
    ap.add_argument("--case", action="append", help="only this case (repeatable)")
    ap.add_argument("--list", action="store_true", help="print the case names and exit")
    args = ap.parse_args()
    names = [f.__name__ for f in ALL]
    if len(set(names)) != len(names):
        sys.exit("make_cases.py: two cases share a name")
    if args.list:
        print("\n".join(names))
        return 0
    unknown = set(args.case or []) - set(names)
    if unknown:
        sys.exit("make_cases.py: no case named %s (see --list)" % ", ".join(sorted(unknown)))
    for make in ALL:
        if args.case and make.__name__ not in args.case:
            continue
        run, case, expected = make()
        if run.name != make.__name__:
            sys.exit("make_cases.py: %s builds a run named %s" % (make.__name__, run.name))
        write_case(os.path.join(args.out, run.name), run, case, expected, case["planted"])
        print("wrote", run.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
