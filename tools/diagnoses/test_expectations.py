#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Unit tests of the case checker (expectations.py) and of the committed cases' files: every
expected.json is valid, every case has its four files and a stream that parses."""
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from expectations import FINDING_IDS, check, validate_expected  # noqa: E402
from replay import load_stream  # noqa: E402

CASES = os.path.join(HERE, "..", "..", "testdata", "diagnoses")


def finding(id_, severity="warning", gpus=(0,), ranks=(0,), start_ms=1000, **kw):
    f = {"id": id_, "severity": severity, "confidence": 0.9, "title": id_, "summary": "",
         "evidence": {}, "start_ms": start_ms, "end_ms": start_ms + 1, "gpus": list(gpus),
         "ranks": list(ranks), "advice": ""}
    f.update(kw)
    return f


def report(*findings, health=80):
    return {"schema": 1, "recording": "x.gpumon", "health_score": health, "deductions": [],
            "findings": list(findings)}


class CheckTest(unittest.TestCase):
    def test_expected_finding_found_with_its_gpus_and_detection_time(self):
        exp = {"findings": [{"id": "data_loader_stall", "gpus": [0], "ranks": [0]}],
               "max_health": 95}
        o = check(exp, report(finding("data_loader_stall", start_ms=7500)), onset_ms=5000)
        self.assertTrue(o.ok, o.problems)
        self.assertEqual(o.detection_s, {"data_loader_stall": 2.5})

    def test_missing_and_info_only_are_misses(self):
        exp = {"findings": [{"id": "memory_leak"}]}
        self.assertEqual(check(exp, report()).missed, ["memory_leak"])
        o = check(exp, report(finding("memory_leak", "info")))
        self.assertFalse(o.ok)
        self.assertIn("only at info", o.problems[0])

    def test_info_expectation_accepts_info(self):
        exp = {"findings": [{"id": "allocator_cache", "severity": "info"}], "min_health": 90}
        self.assertTrue(check(exp, report(finding("allocator_cache", "info"), health=100)).ok)

    def test_gpus_are_checked_against_the_union_of_findings(self):
        exp = {"findings": [{"id": "idle_gpu", "gpus": [2, 3]}]}
        two = report(finding("idle_gpu", gpus=[2]), finding("idle_gpu", gpus=[3]))
        self.assertTrue(check(exp, two).ok)
        self.assertFalse(check(exp, report(finding("idle_gpu", gpus=[2]))).ok)

    def test_false_alarms_allowed_and_info(self):
        exp = {"findings": [{"id": "straggler", "ranks": [0]}], "allowed": ["rank_wait"]}
        r = report(finding("straggler"), finding("rank_wait"), finding("launch_bound", "info"))
        self.assertTrue(check(exp, r).ok)
        o = check(exp, report(finding("straggler"), finding("imbalance", "critical")))
        self.assertEqual(o.false_alarms, ["imbalance"])

    def test_health_bounds_and_mentions(self):
        exp = {"findings": [], "min_health": 90, "max_health": 100}
        self.assertFalse(check(exp, report(health=85)).ok)
        exp = {"findings": [{"id": "throttled", "mentions": ["thermal"]}]}
        hot = finding("throttled", evidence={"cause": "HW thermal slowdown"})
        self.assertTrue(check(exp, report(hot)).ok)
        self.assertFalse(check(exp, report(finding("throttled", summary="power cap"))).ok)

    def test_malformed_report(self):
        self.assertFalse(check({"findings": []}, {"schema": 2, "findings": []}).ok)
        self.assertFalse(check({"findings": []}, report({"id": "xid", "severity": "bad"})).ok)

    def test_validate_expected(self):
        self.assertEqual(validate_expected({"findings": [{"id": "xid"}], "forbidden": ["oom"]}),
                         [])
        self.assertTrue(validate_expected({"findings": [{"id": "nope"}]}))
        self.assertTrue(validate_expected({"findings": [{"id": "xid"}], "forbidden": ["xid"]}))
        self.assertTrue(validate_expected({"finding": []}))


class CommittedCasesTest(unittest.TestCase):
    def test_every_case_is_complete_and_valid(self):
        names = sorted(n for n in os.listdir(CASES) if os.path.isdir(os.path.join(CASES, n)))
        self.assertGreaterEqual(len(names), 30)
        covered = set()
        healthy = 0
        for name in names:
            d = os.path.join(CASES, name)
            for f in ("case.json", "expected.json", "scenario.json", "steps.ndjson"):
                self.assertTrue(os.path.isfile(os.path.join(d, f)), "%s/%s" % (name, f))
            with open(os.path.join(d, "expected.json")) as f:
                exp = json.load(f)
            with open(os.path.join(d, "case.json")) as f:
                case = json.load(f)
            self.assertEqual(validate_expected(exp, name), [])
            # Longer only where the engine's thresholds need more time, saying which.
            if case["duration_s"] > 20:
                self.assertIn("long_because", case, name)
            self.assertLessEqual(case["duration_s"], 150, name)
            stream = load_stream(os.path.join(d, "steps.ndjson"))
            self.assertTrue(all(e["at"] <= case["duration_s"] for e in stream), name)
            covered |= {e["id"] for e in exp["findings"]}
            healthy += not [e for e in exp["findings"] if e.get("severity") != "info"]
        self.assertEqual(covered, FINDING_IDS)
        self.assertGreaterEqual(healthy, 5)

    def test_real_cases_are_valid(self):
        with open(os.path.join(HERE, "real_cases.json")) as f:
            real = json.load(f)
        for e in real["cases"]:
            self.assertEqual(validate_expected(e["expected"], e["name"]), [])
            if not e.get("pending"):
                self.assertTrue(os.path.isfile(os.path.join(HERE, "..", "..", e["recording"])))


if __name__ == "__main__":
    unittest.main()
