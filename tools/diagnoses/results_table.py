# SPDX-License-Identifier: MIT
"""The results of run_cases.py as a plain-text table (terminal, ctest log) and as markdown
(docs/DIAGNOSES.md, "Labelled cases")."""


def _expected(r):
    ids = [f["id"] + ("(info)" if f.get("severity") == "info" else "")
           for f in r.expected.get("findings", [])]
    return ", ".join(ids) or "none"


def _found(r):
    o = r.outcome
    if o is None:
        return "-"
    parts = list(o.found) + ["%s(info)" % i for i in o.found_info]
    return ", ".join(parts) or "none"


def _detection(r):
    o = r.outcome
    if o is None or not o.detection_s:
        return "-"
    return ", ".join("%s %+.1f s" % (i, s) for i, s in sorted(o.detection_s.items()))


def _status(r, with_doctor=True):
    if r.error:
        return "ERROR"
    if r.kind == "real" and r.outcome is None:
        return "pending" if r.notes else "-"
    if not with_doctor or r.outcome is None:
        return "recorded"
    return "ok" if r.outcome.ok else "FAIL"


def _why(r):
    if r.error:
        return " ".join(r.error.split())[:400]
    bits = list(r.outcome.problems) if r.outcome else []
    return "; ".join(bits + r.notes)


def text_table(results, with_doctor=True):
    rows = [("case", "expected", "found", "health", "onset->start", "result", "why")]
    for r in results:
        health = "-" if r.outcome is None or r.outcome.health is None else str(r.outcome.health)
        rows.append((r.name, _expected(r), _found(r), health, _detection(r),
                     _status(r, with_doctor), _why(r)))
    widths = [min(max(len(row[i]) for row in rows), 48) for i in range(len(rows[0]) - 1)]
    lines = []
    for row in rows:
        cells = [row[i].ljust(widths[i]) for i in range(len(widths))] + [row[-1]]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def _md(text):
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(results):
    out = ["| case | kind | planted | expected | found (warning+; info) | health | "
           "onset to finding start | false alarms | result |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        o = r.outcome
        health = "-" if o is None or o.health is None else str(o.health)
        false = ", ".join(o.false_alarms) if o and o.false_alarms else ("-" if o else "?")
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r.name, r.kind, _md(r.planted), _expected(r), _found(r), health, _detection(r),
            false, _status(r) + (": " + _md(_why(r)) if not r.ok else "")))
    pending = [r for r in results if r.kind == "real" and r.outcome is None and r.notes]
    results = [r for r in results if r not in pending]
    problems = [r for r in results if any(f.get("severity", "warning") != "info"
                                          for f in r.expected.get("findings", []))]
    healthy = [r for r in results if r not in problems]
    found = sum(1 for r in problems if r.outcome and not r.outcome.missed and not r.error)
    alarms = sum(len(r.outcome.false_alarms) for r in results if r.outcome)
    quiet = sum(1 for r in healthy if r.outcome and not r.outcome.false_alarms and not r.error)
    out.append("")
    out.append("%d cases: %d of %d planted problems found and named; %d of %d healthy runs "
               "without a finding at warning or above; %d false alarm(s) in all." % (
                   len(results), found, len(problems), quiet, len(healthy), alarms))
    if pending:
        out.append("Real recordings not captured yet: %s." % ", ".join(r.name for r in pending))
    return "\n".join(out) + "\n"
