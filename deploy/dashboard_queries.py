#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Print every PromQL expression of the deploy/ files, one JSON object per line.

Sources: the Grafana dashboards, the node one (grafana/gpumon-dashboard.json) and the job one
(grafana/gpumon-job.json), their panel targets and the metric selector of each label_values()
template variable, and the alert rules. Grafana variables are replaced so the expression runs
as is against Prometheus's HTTP API: $instance, $gpu and $cluster (also ${x} and [[x]]) by
`.*`, $job_id by --job-id (default `.+`: any job), $__range and $__rate_interval by 5m,
$__interval by 1m.

Each line has:
  source       "dashboard" (a panel target), "variable" (a template variable's metric
               selector), "alert" or "record" (a recording rule)
  expr         the expression, ready for /api/v1/query
  metrics      the metric names the expression reads, sorted
  condition    true for alert rules: the expression is filtered by its threshold, so it
               returns data only while the alert condition holds
  event_series the metrics of `metrics` whose series exist only after an event (an XID, an
               ECC event): no data on a scenario without one is expected
  and dashboard (the dashboard's uid) with panel / panel_id / ref (dashboard) or name
  (variable); alert / severity / group (alert), record / group (record).

  deploy/dashboard_queries.py                 # the lines described above
  deploy/dashboard_queries.py --job-id 4711.0 # the job dashboard's queries for that job
  deploy/dashboard_queries.py --metrics       # only the sorted metric names, one a line
  deploy/dashboard_queries.py --parser simple # read the rules without PyYAML (the fallback
                                              # used automatically when PyYAML is missing)
Exits 1 when a file cannot be read or an expression keeps a `$` after substitution.
"""

import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DASHBOARDS = [os.path.join(HERE, "grafana", "gpumon-dashboard.json"),
                      os.path.join(HERE, "grafana", "gpumon-job.json")]
DEFAULT_RULES = [os.path.join(HERE, "alerts", "gpumon-alerts.yml")]

# Series that appear only once an event happened (docs/exporter.md).
EVENT_SERIES = {
    "gpumon_gpu_xid_errors_total",
    "gpumon_gpu_xid_last_timestamp_seconds",
    "gpumon_gpu_ecc_events_total",
}

SUBSTITUTIONS = [
    (re.compile(r"\$\{?__rate_interval\}?|\[\[__rate_interval\]\]"), "5m"),
    (re.compile(r"\$\{?__range\}?|\[\[__range\]\]"), "5m"),
    (re.compile(r"\$\{?__interval\}?|\[\[__interval\]\]"), "1m"),
    (re.compile(r"\$\{?(instance|gpu|cluster)(:[a-z]+)?\}?|\[\[(instance|gpu|cluster)\]\]"), ".*"),
]
JOB_ID = re.compile(r"\$\{?job_id(:[a-z]+)?\}?|\[\[job_id\]\]")

KEYWORDS = {
    # binary and set operators, modifiers
    "and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right",
    "offset", "bool", "atan2", "inf", "nan",
    # aggregation operators (may be followed by `by (...)` instead of `(`)
    "sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
    "bottomk", "topk", "quantile",
}


def substitute(expr, job_id=".+"):
    for pattern, value in SUBSTITUTIONS:
        expr = pattern.sub(value, expr)
    return JOB_ID.sub(lambda _: job_id, expr)


def metric_names(expr):
    """The metric names an expression selects (a lexical scan, enough for our files)."""
    s = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', expr)  # strings
    names = set()
    # {__name__="x"} selectors
    for m in re.finditer(r'__name__\s*=\s*"([a-zA-Z_:][a-zA-Z0-9_:]*)"', expr):
        names.add(m.group(1))
    s = re.sub(r"\{[^}]*\}", " ", s)  # label matchers
    s = re.sub(r"\[[^\]]*\]", " ", s)  # ranges and subqueries
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", s)
    s = re.sub(r"#[^\n]*", " ", s)  # comments
    for m in re.finditer(r"(?<![\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?", s):
        word, call = m.group(1), m.group(2)
        if call or word.lower() in KEYWORDS:
            continue
        names.add(word)
    return sorted(names)


def walk_panels(panels):
    for p in panels or []:
        yield p
        yield from walk_panels(p.get("panels"))


def dashboard_entries(path):
    with open(path, encoding="utf-8") as f:
        dash = json.load(f)
    uid = dash.get("uid") or os.path.basename(path)
    out = []
    for var in dash.get("templating", {}).get("list", []):
        if var.get("type") != "query":
            continue
        q = var.get("query")
        q = q.get("query", "") if isinstance(q, dict) else (q or "")
        m = re.fullmatch(r"\s*label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*", q, re.S)
        m2 = re.fullmatch(r"\s*query_result\((.*)\)\s*", q, re.S)
        if m:
            expr = m.group(1).strip()
        elif m2:
            expr = m2.group(1).strip()
        elif re.match(r"\s*(label_values|label_names|metrics)\(", q):
            expr = None  # label_values(label), label_names(), metrics(): no selector to run
        else:
            expr = q.strip() or None
        if expr:
            out.append({"source": "variable", "dashboard": uid, "name": var.get("name"),
                        "raw": expr})
    for p in walk_panels(dash.get("panels")):
        for t in p.get("targets") or []:
            if t.get("hide") or not t.get("expr"):
                continue
            out.append({"source": "dashboard", "dashboard": uid, "panel": p.get("title"),
                        "panel_id": p.get("id"), "ref": t.get("refId"), "raw": t["expr"]})
    return out


def _unquote(v):
    v = v.strip()
    if v.startswith('"'):
        return json.loads(v)
    if v.startswith("'"):
        return v[1:-1].replace("''", "'")
    return v


def load_rules_simple(path):
    """A reader for the subset of YAML our rule files use (no PyYAML needed): groups with
    `- alert:`/`- record:` items whose `expr:` is a one-line scalar or a `|` / `>` block."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    groups, group, rule = [], None, None
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        indent = len(line) - len(line.lstrip(" "))
        i += 1
        if not stripped or stripped.startswith("#"):
            continue
        m = re.match(r"-?\s*name:\s*(.*)$", stripped)
        if m and stripped.startswith("- name:"):
            group = {"name": _unquote(m.group(1)), "rules": []}
            groups.append(group)
            continue
        m = re.match(r"-\s*(alert|record):\s*(.*)$", stripped)
        if m:
            rule = {m.group(1): _unquote(m.group(2)), "labels": {}}
            group["rules"].append(rule)
            continue
        m = re.match(r"(?:-\s*)?expr:\s*(.*)$", stripped)
        if m and rule is not None:
            value = m.group(1).strip()
            if value and value[0] in "|>":
                block = []
                while i < len(lines):
                    nxt = lines[i]
                    if nxt.strip() and len(nxt) - len(nxt.lstrip(" ")) <= indent:
                        break
                    block.append(nxt)
                    i += 1
                while block and not block[-1].strip():
                    block.pop()
                nonblank = [b for b in block if b.strip()]
                cut = min(len(b) - len(b.lstrip(" ")) for b in nonblank) if nonblank else 0
                block = [b[cut:] for b in block]
                rule["expr"] = ("\n" if value[0] == "|" else " ").join(block) + (
                    "" if value.endswith("-") else "\n")
            else:
                rule["expr"] = _unquote(value)
            continue
        m = re.match(r"severity:\s*(.*)$", stripped)
        if m and rule is not None:
            rule["labels"]["severity"] = _unquote(m.group(1))
    return {"groups": groups}


def load_rules(path, parser):
    if parser == "yaml":
        import yaml  # noqa: PLC0415
        with open(path, encoding="utf-8") as f:
            return yaml.safe_load(f)
    return load_rules_simple(path)


def rule_entries(paths, parser):
    out = []
    for path in paths:
        doc = load_rules(path, parser)
        for group in doc.get("groups") or []:
            for rule in group.get("rules") or []:
                e = {"source": "alert" if "alert" in rule else "record", "group": group.get("name"),
                     "raw": rule["expr"]}
                if "alert" in rule:
                    e["alert"] = rule["alert"]
                    e["severity"] = (rule.get("labels") or {}).get("severity")
                else:
                    e["record"] = rule["record"]
                out.append(e)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dashboard", nargs="*", default=DEFAULT_DASHBOARDS,
                    help="dashboard files (default: the node and the job dashboard)")
    ap.add_argument("--rules", nargs="*", default=DEFAULT_RULES)
    ap.add_argument("--metrics", action="store_true", help="print only the metric names used")
    ap.add_argument("--job-id", default=".+",
                    help="what $job_id becomes, a regular expression (default .+: any job)")
    ap.add_argument("--parser", choices=["auto", "yaml", "simple"], default="auto",
                    help="how to read the rule files (auto: PyYAML when installed)")
    args = ap.parse_args()

    parser = args.parser
    if parser == "auto":
        try:
            import yaml  # noqa: F401,PLC0415
            parser = "yaml"
        except ImportError:
            parser = "simple"

    try:
        entries = [e for path in args.dashboard for e in dashboard_entries(path)]
        entries += rule_entries(args.rules, parser)
    except (OSError, ValueError, KeyError) as e:
        print(f"dashboard_queries: {e}", file=sys.stderr)
        return 1

    bad = 0
    all_metrics = set()
    lines = []
    for e in entries:
        raw = e.pop("raw")
        expr = substitute(raw, args.job_id).strip()
        if "$" in expr or re.search(r"\[\[[A-Za-z_][A-Za-z0-9_]*\]\]", expr):
            print(f"dashboard_queries: unreplaced variable in {raw!r}", file=sys.stderr)
            bad += 1
        names = metric_names(expr)
        all_metrics.update(names)
        out = {"source": e["source"]}
        out.update({k: v for k, v in e.items() if k != "source"})
        out["expr"] = expr
        out["metrics"] = names
        out["condition"] = e["source"] == "alert"
        out["event_series"] = sorted(EVENT_SERIES.intersection(names))
        lines.append(json.dumps(out, sort_keys=False))
    if args.metrics:
        print("\n".join(sorted(all_metrics)))
    else:
        print("\n".join(lines))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
