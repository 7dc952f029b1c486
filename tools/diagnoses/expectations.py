# SPDX-License-Identifier: MIT
"""expected.json against what `gpumon doctor --json` found.

expected.json: {"findings": [{"id": "data_loader_stall", "gpus": [0], "ranks": [0]}],
                "forbidden": ["memory_leak"], "allowed": ["rank_wait"],
                "max_health": 95, "min_health": 0}
- every expected id is present with severity >= warning (or >= the entry's "severity", e.g.
  "info" for allocator_cache); its "gpus"/"ranks", when given, are within the union of the
  lists of the findings with that id; each word of its "mentions" appears (any case) in one of
  those findings' title, summary, evidence or advice;
- no other finding at warning or above, except ids listed in "allowed" (a consequence the
  engine may or may not report, e.g. rank_wait beside a straggler); "forbidden" names ids that
  must not appear (documentation: any unexpected id at warning or above already fails);
- min_health <= health_score <= max_health. Info findings never count as false alarms.
"""
import json

SEVERITY = {"info": 0, "warning": 1, "critical": 2}
# The ids a synthetic case covers (test_expectations.py checks each has one).
FINDING_IDS = {
    "data_loader_stall", "launch_bound", "throttled", "rank_wait", "memory_leak",
    "allocator_cache", "fragmentation", "oom_forecast", "oom", "foreign_memory", "imbalance",
    "straggler", "idle_gpu", "hang", "ecc_errors", "xid", "gpu_lost"}
# The engine's other ids: tested by their rules' C++ and Python tests and the real cases, not
# yet by a synthetic case; an expectation may name them.
OTHER_IDS = {
    "step_pauses", "run_failed", "run_interrupted", "host_memory_leak", "cpu_straggler",
    "oom_guard", "loader_tuned", "loader_limited", "steps_not_recorded", "recording_cut_short",
    "no_data"}
KNOWN_IDS = FINDING_IDS | OTHER_IDS


class Outcome:
    def __init__(self):
        self.problems = []  # why the case fails, one line each
        self.found = []  # ids at warning or above
        self.found_info = []  # ids at info
        self.detection_s = {}  # expected id -> seconds from onset to the finding's start
        self.false_alarms = []
        self.missed = []
        self.health = None

    @property
    def ok(self):
        return not self.problems


def validate_expected(exp, where="expected.json"):
    """Problems with an expected.json itself (a broken case must not pass silently)."""
    errors = []
    known = {"findings", "forbidden", "allowed", "max_health", "min_health"}
    errors += ["%s: unknown key %r" % (where, k) for k in exp if k not in known]
    ids = []
    for f in exp.get("findings", []):
        if f.get("id") not in KNOWN_IDS:
            errors.append("%s: unknown finding id %r" % (where, f.get("id")))
        if f.get("severity", "warning") not in SEVERITY:
            errors.append("%s: bad severity %r" % (where, f.get("severity")))
        extra = set(f) - {"id", "gpus", "ranks", "severity", "mentions"}
        if extra:
            errors.append("%s: unknown keys %s in %s" % (where, sorted(extra), f.get("id")))
        ids.append(f.get("id"))
    for key in ("forbidden", "allowed"):
        for i in exp.get(key, []):
            if i not in KNOWN_IDS:
                errors.append("%s: unknown finding id %r in %s" % (where, i, key))
    clash = set(exp.get("forbidden", [])) & (set(exp.get("allowed", [])) | set(ids))
    if clash:
        errors.append("%s: %s both expected/allowed and forbidden" % (where, sorted(clash)))
    if not 0 <= exp.get("min_health", 0) <= exp.get("max_health", 100) <= 100:
        errors.append("%s: health bounds out of order" % where)
    return errors


def _text(f):
    return " ".join([str(f.get("title", "")), str(f.get("summary", "")),
                     json.dumps(f.get("evidence", {})), str(f.get("advice", ""))]).lower()


def _severity(f):
    return SEVERITY.get(f.get("severity"), -1)


def check(exp, report, onset_ms=None):
    """Compares a doctor report (the parsed --json object) with an expected.json object."""
    out = Outcome()
    findings = report.get("findings") if isinstance(report, dict) else None
    if report.get("schema") != 1 or not isinstance(findings, list):
        out.problems.append("doctor output: no schema 1 object with a findings list")
        return out
    for f in findings:
        if not isinstance(f, dict) or f.get("severity") not in SEVERITY or "id" not in f:
            out.problems.append("doctor output: malformed finding %s" % json.dumps(f)[:120])
            return out
    out.health = report.get("health_score")
    out.found = sorted({f["id"] for f in findings if _severity(f) >= 1})
    out.found_info = sorted({f["id"] for f in findings if _severity(f) == 0} - set(out.found))

    expected_ids = set()
    for e in exp.get("findings", []):
        expected_ids.add(e["id"])
        need = SEVERITY[e.get("severity", "warning")]
        hits = [f for f in findings if f["id"] == e["id"] and _severity(f) >= need]
        if not hits:
            weaker = [f["severity"] for f in findings if f["id"] == e["id"]]
            out.missed.append(e["id"])
            out.problems.append("missed %s%s" % (e["id"], " (only at %s)" % ", ".join(weaker)
                                                 if weaker else ""))
            continue
        for key in ("gpus", "ranks"):
            want = set(e.get(key) or [])
            got = {x for f in hits for x in (f.get(key) or [])}
            if not want <= got:
                out.problems.append("%s: %s %s expected, found %s" % (
                    e["id"], key, sorted(want), sorted(got)))
        for word in e.get("mentions", []):
            if not any(word.lower() in _text(f) for f in hits):
                out.problems.append("%s: does not mention %r" % (e["id"], word))
        if onset_ms is not None:
            starts = [f.get("detected_ms", f.get("start_ms")) for f in hits]
            starts = [s for s in starts if isinstance(s, (int, float))]
            if starts:
                out.detection_s[e["id"]] = (min(starts) - onset_ms) / 1000.0

    allowed = set(exp.get("allowed", []))
    for i in out.found:
        if i not in expected_ids and i not in allowed:
            out.false_alarms.append(i)
            out.problems.append("false alarm %s%s" % (
                i, " (forbidden)" if i in exp.get("forbidden", []) else ""))
    lo, hi = exp.get("min_health", 0), exp.get("max_health", 100)
    if not isinstance(out.health, (int, float)):
        out.problems.append("no health_score")
    elif not lo <= out.health <= hi:
        out.problems.append("health %s outside [%s, %s]" % (out.health, lo, hi))
    return out
