#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Runs the labelled diagnosis cases and checks `gpumon doctor` against their expected.json.

Synthetic cases (testdata/diagnoses/<case>/): `gpumon agent` records the case's fake-NVML
scenario while its step stream is replayed through the agent's socket in real time; then
`gpumon doctor REC --json` runs on the recording. Real cases (tools/diagnoses/real_cases.json):
`gpumon doctor` on a committed recording. Prints one row per case and exits 1 on any miss,
false alarm or health out of bounds, 77 when `gpumon doctor` does not exist yet (ctest SKIP).
Debian's /usr/bin/python3, standard library only. docs/diagnoses-cases.md has the details.

usage: run_cases.py [--gpumon build/gpumon] [--fake-nvml LIB] [--case NAME ...] [--jobs N]
                    [--keep DIR] [--markdown FILE] [--only synthetic|real] [--record-only]
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from expectations import check, validate_expected  # noqa: E402
from replay import ReplayError, check_recorded, play  # noqa: E402
from results_table import markdown_table, text_table  # noqa: E402

SKIP = 77


class Result:
    def __init__(self, name, kind, planted, expected):
        self.name, self.kind, self.planted, self.expected = name, kind, planted, expected
        self.outcome = None  # expectations.Outcome
        self.error = None  # the harness failed (not the diagnosis)
        self.notes = []
        self.wall_s = 0.0

    @property
    def ok(self):
        return self.error is None and (self.outcome is None or self.outcome.ok)


def load_json(path):
    with open(path) as f:
        return json.load(f)


def doctor_available(gpumon):
    try:
        r = subprocess.run([gpumon, "doctor", "--help"], capture_output=True, timeout=30)
    except OSError:
        return False
    return r.returncode == 0


def run_doctor(gpumon, rec, work):
    r = subprocess.run([gpumon, "doctor", rec, "--json"], capture_output=True, text=True,
                       timeout=120)
    if work:
        with open(os.path.join(work, "doctor.json"), "w") as f:
            f.write(r.stdout)
    if r.returncode != 0:
        raise ReplayError("gpumon doctor exited %d: %s" % (r.returncode, r.stderr.strip()[-300:]))
    try:
        return json.loads(r.stdout)
    except ValueError as e:
        raise ReplayError("gpumon doctor --json printed no JSON object: %s" % e)


def synthetic_cases(root):
    out = []
    for name in sorted(os.listdir(root)):
        d = os.path.join(root, name)
        if os.path.isfile(os.path.join(d, "case.json")):
            out.append(d)
    return out


def run_synthetic(args, case_dir, with_doctor):
    case = load_json(os.path.join(case_dir, "case.json"))
    expected = load_json(os.path.join(case_dir, "expected.json"))
    res = Result(os.path.basename(case_dir), "synthetic", case.get("planted", ""), expected)
    start = time.monotonic()
    work = tempfile.mkdtemp(prefix="gpd-")  # short: a Unix socket path has 107 bytes at most
    try:
        bad = validate_expected(expected, os.path.join(case_dir, "expected.json"))
        if bad:
            raise ReplayError("; ".join(bad))
        played, rec = play(args.gpumon, args.fake_nvml, case_dir, float(case["duration_s"]),
                           work)
        check_recorded(args.gpumon, rec, played)
        if played.max_late_s > 0.25:
            res.notes.append("messages up to %.2f s late (machine busy)" % played.max_late_s)
        if with_doctor:
            report = run_doctor(args.gpumon, rec, work)
            onset = case.get("onset_s")
            onset_ms = None if onset is None else (played.t0_wall + onset) * 1000.0
            res.outcome = check(expected, report, onset_ms)
    except (ReplayError, OSError, ValueError, subprocess.SubprocessError) as e:
        res.error = str(e)
    finally:
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
            for src, dst in (("run.gpumon", ".gpumon"), ("doctor.json", ".doctor.json"),
                             ("agent.err", ".agent.log")):
                if os.path.exists(os.path.join(work, src)):
                    shutil.copyfile(os.path.join(work, src),
                                    os.path.join(args.keep, res.name + dst))
        shutil.rmtree(work, ignore_errors=True)
    res.wall_s = time.monotonic() - start
    return res


def recording_start_ms(path):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'start_time_ms'").fetchone()
        return float(row[0]) if row else None
    finally:
        db.close()


def run_real(args, entry, with_doctor):
    res = Result(entry["name"], "real", entry.get("planted", ""), entry.get("expected", {}))
    start = time.monotonic()
    try:
        bad = validate_expected(res.expected, "real_cases.json: " + entry["name"])
        if bad:
            raise ReplayError("; ".join(bad))
        rec = os.path.join(REPO, entry["recording"])
        if not os.path.isfile(rec):
            if entry.get("pending"):  # listed before it was captured: not a failure
                res.notes.append("pending: %s not captured yet" % entry["recording"])
                return res
            raise ReplayError("no recording %s" % entry["recording"])
        if with_doctor:
            work = None
            if args.keep:
                work = os.path.join(args.keep, res.name + ".real")
                os.makedirs(work, exist_ok=True)
            report = run_doctor(args.gpumon, rec, work)
            onset_ms = None
            if entry.get("onset_s") is not None:
                t0 = recording_start_ms(rec)
                onset_ms = None if t0 is None else t0 + 1000.0 * entry["onset_s"]
            res.outcome = check(res.expected, report, onset_ms)
    except (ReplayError, OSError, ValueError, KeyError, sqlite3.Error,
            subprocess.SubprocessError) as e:
        res.error = str(e)
    res.wall_s = time.monotonic() - start
    return res


def duration_of(job):
    kind, item = job
    if kind != "synthetic":
        return 0
    try:
        return float(load_json(os.path.join(item, "case.json")).get("duration_s", 0))
    except (OSError, ValueError):
        return 0


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpumon", default=os.path.join(REPO, "build", "gpumon"))
    ap.add_argument("--fake-nvml", help="default: fake-nvml/libnvidia-ml.so.1 beside --gpumon")
    ap.add_argument("--cases", default=os.path.join(REPO, "testdata", "diagnoses"))
    ap.add_argument("--real", default=os.path.join(HERE, "real_cases.json"))
    ap.add_argument("--case", action="append", help="run only this case (repeatable)")
    ap.add_argument("--only", choices=("synthetic", "real"))
    ap.add_argument("--jobs", type=int, default=8,
                    help="cases at once (default 8: a case mostly sleeps; the suite takes ~3 min)")
    ap.add_argument("--keep", help="keep recordings, doctor output and agent logs here")
    ap.add_argument("--markdown", help="also write the results as a markdown table here")
    ap.add_argument("--record-only", action="store_true",
                    help="replay and check the recordings only (no gpumon doctor)")
    args = ap.parse_args(argv)
    args.gpumon = os.path.abspath(args.gpumon)
    if not args.fake_nvml:
        args.fake_nvml = os.path.join(os.path.dirname(args.gpumon), "fake-nvml",
                                      "libnvidia-ml.so.1")
    args.fake_nvml = os.path.abspath(args.fake_nvml)
    if args.keep:
        args.keep = os.path.abspath(args.keep)
    return args


def main(argv=None):
    args = parse_args(argv)
    for path, what in ((args.gpumon, "--gpumon"), (args.fake_nvml, "--fake-nvml")):
        if not os.path.isfile(path):
            print("run_cases.py: %s %s does not exist (build the gpumon and gpumon_fake_nvml "
                  "targets)" % (what, path), file=sys.stderr)
            return 2
    with_doctor = not args.record_only
    if with_doctor and not doctor_available(args.gpumon):
        print("run_cases.py: `%s doctor --help` failed: gpumon doctor does not exist in this "
              "build yet; skipping (77). --record-only replays the cases without it."
              % args.gpumon)
        return SKIP
    jobs = []
    if args.only != "real":
        jobs += [("synthetic", d) for d in synthetic_cases(args.cases)]
    if args.only != "synthetic" and os.path.exists(args.real):
        jobs += [("real", e) for e in load_json(args.real).get("cases", [])]
    if args.case:
        jobs = [j for j in jobs if (os.path.basename(j[1]) if j[0] == "synthetic"
                                    else j[1]["name"]) in args.case]
        if not jobs:
            print("run_cases.py: no case named %s" % ", ".join(args.case), file=sys.stderr)
            return 2
    started = time.monotonic()
    # Longest first: the long cases overlap with the short ones instead of ending the run alone.
    order = sorted(range(len(jobs)), key=lambda i: -duration_of(jobs[i]))
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {i: pool.submit(run_synthetic if jobs[i][0] == "synthetic" else run_real,
                                  args, jobs[i][1], with_doctor) for i in order}
        results = [futures[i].result() for i in range(len(jobs))]
    print(text_table(results, with_doctor))
    failed = [r for r in results if not r.ok]
    print("%d case(s), %d failed, %.0f s" % (len(results), len(failed), time.monotonic() - started))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown_table(results))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
