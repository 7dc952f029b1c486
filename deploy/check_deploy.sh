#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks the files of deploy/ (run by CTest as deploy_checks, or by hand):
#   - promtool check config prometheus.yml (also checks the rule files it names)
#   - promtool check rules + promtool test rules for the alert rules; every alert has a firing
#     and a non-firing test case
#   - the Grafana dashboards: valid JSON, schemaVersion >= 36, __inputs DS_PROMETHEUS, the
#     datasource variable, every panel and target on ${datasource}, unique panel ids, every
#     referenced variable defined, units set; the node dashboard's instance / gpu variables
#     and every query filtered by instance and gpu; the job dashboard's cluster / job_id /
#     instance variables, every query filtered by cluster and (for the job's series) job_id,
#     per node and per rank by instance, GPU families joined to the job's GPUs or nodes
#   - dashboard_queries.py: runs, prints one JSON object per expression, nothing left
#     unreplaced, every expression parses (promtool, as recording rules), every metric is one
#     docs/exporter.md names
#   - gpumon.service: the required settings, and `systemd-analyze verify` when available
#   - the fleet files: promtool check config of prometheus/agent.yml (--agent) and
#     prometheus/federation.yml; kubernetes/gpumon.yaml parses and keeps what gpumon needs
# Exit status: 0 all passed, 1 a check failed, 77 promtool or python3 missing (CTest: skipped;
# scripts/setup.sh installs both).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
PYTHON="${PYTHON:-python3}"

for tool in promtool "$PYTHON"; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "check_deploy: SKIP: $tool not found (scripts/setup.sh installs it)"
    exit 77
  fi
done

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failed=0
passed=0

# check NAME COMMAND...: runs the command, shows its output only when it fails.
check() {
  local name="$1"
  shift
  if "$@" >"$tmp/out" 2>&1; then
    passed=$((passed + 1))
    echo "ok   $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name"
    sed 's/^/     /' "$tmp/out"
  fi
}

dashboard="$here/grafana/gpumon-dashboard.json"
job_dashboard="$here/grafana/gpumon-job.json"
rules="$here/alerts/gpumon-alerts.yml"
tests="$here/alerts/gpumon-alerts_test.yml"
unit="$here/gpumon.service"

# ------------------------------------------------------------------ Prometheus
check "promtool check config prometheus.yml" promtool check config "$here/prometheus.yml"
check "prometheus.yml scrapes job gpumon on 127.0.0.1:9477 every 15s" \
  "$PYTHON" - "$here/prometheus.yml" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
active = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#"))
need = [r"job_name:\s*gpumon\b", r"127\.0\.0\.1:9477", r"scrape_interval:\s*15s",
        r"rule_files:\s*\n\s*-\s*alerts/gpumon-alerts\.yml"]
bad = [n for n in need if not re.search(n, active)]
for n in bad:
    print("missing:", n)
sys.exit(1 if bad else 0)
EOF
check "promtool check config --agent prometheus/agent.yml" \
  promtool check config --agent "$here/prometheus/agent.yml"
check "promtool check config prometheus/federation.yml" \
  promtool check config "$here/prometheus/federation.yml"
check "kubernetes/gpumon.yaml: DaemonSet, Service, ServiceMonitor as gpumon needs them" \
  "$PYTHON" - "$here/kubernetes/gpumon.yaml" <<'EOF'
import sys
try:
    import yaml
except ImportError:
    print("PyYAML missing: scripts/setup.sh installs python3-yaml"); sys.exit(1)
docs = {d["kind"]: d for d in yaml.safe_load_all(open(sys.argv[1])) if d}
bad = [k for k in ("Namespace", "DaemonSet", "Service", "ServiceMonitor") if k not in docs]
pod = docs["DaemonSet"]["spec"]["template"]["spec"] if "DaemonSet" in docs else {}
c = (pod.get("containers") or [{}])[0]
args = " ".join(c.get("args", []))
if pod.get("hostPID") is not True:
    bad.append("hostPID: true (NVML reports host PIDs)")
if "--listen 0.0.0.0:9477" not in args:
    bad.append("serve --listen 0.0.0.0:9477")
if "nvidia.com/gpu" in str(c.get("resources", {})):
    bad.append("no nvidia.com/gpu request: gpumon watches the node's GPUs without taking one")
env = {e["name"]: e.get("value") for e in c.get("env", [])}
if env.get("NVIDIA_VISIBLE_DEVICES") != "all":
    bad.append("NVIDIA_VISIBLE_DEVICES=all")
if [p.get("containerPort") for p in c.get("ports", [])] != [9477]:
    bad.append("containerPort 9477")
sc = c.get("securityContext", {})
if sc.get("privileged") or sc.get("allowPrivilegeEscalation") is not False:
    bad.append("not privileged, allowPrivilegeEscalation: false")
if "SYS_ADMIN" in str(sc.get("capabilities", {})):
    bad.append("no SYS_ADMIN")
eps = docs.get("ServiceMonitor", {}).get("spec", {}).get("endpoints") or [{}]
if {"targetLabel": "job", "replacement": "gpumon"} not in eps[0].get("relabelings", []):
    bad.append("the ServiceMonitor sets job=gpumon (deploy/alerts match it)")
if eps[0].get("honorLabels") is not True or not any(
        r.get("action") == "labeldrop" and "pod" in r.get("regex", "")
        for r in eps[0].get("relabelings", [])):
    bad.append("the ServiceMonitor keeps gpumon's pod and namespace labels (honorLabels, labeldrop)")
if pod.get("priorityClassName") == "system-node-critical":
    bad.append("no system-node-critical outside kube-system")
for b in bad:
    print("missing:", b)
sys.exit(1 if bad else 0)
EOF
check "promtool check rules" promtool check rules "$rules"
check "promtool test rules" promtool test rules "$tests"
check "every alert has a firing and a non-firing test" \
  "$PYTHON" - "$rules" "$tests" <<'EOF'
import re, sys
rules = open(sys.argv[1]).read()
alerts = set(re.findall(r"^\s*-\s*alert:\s*(\S+)", rules, re.M))
firing, quiet = set(), set()
lines = open(sys.argv[2]).read().splitlines()
for i, line in enumerate(lines):
    m = re.match(r"\s*alertname:\s*(\S+)", line)
    if not m:
        continue
    nxt = next((l for l in lines[i + 1:] if l.strip() and not l.strip().startswith("#")), "")
    (quiet if re.match(r"\s*exp_alerts:\s*\[\]", nxt) else firing).add(m.group(1))
bad = 0
if not alerts:
    print("no alerts found in", sys.argv[1]); bad = 1
for a in sorted(alerts):
    if a not in firing:
        print(f"{a}: no test case where it fires"); bad = 1
    if a not in quiet:
        print(f"{a}: no test case where it does not fire"); bad = 1
for a in sorted((firing | quiet) - alerts):
    print(f"{a}: tested but not defined"); bad = 1
sys.exit(bad)
EOF
check "alert rules: severity, summary, description, runbook; no serials" \
  "$PYTHON" - "$rules" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
blocks = re.split(r"\n(?=\s*-\s*alert:)", text)[1:]
bad = 0
for b in blocks:
    name = re.match(r"\s*-\s*alert:\s*(\S+)", b).group(1)
    for key in ("severity:", "summary:", "description:", "runbook:"):
        if key not in b:
            print(f"{name}: no {key}"); bad = 1
    sev = re.search(r"severity:\s*(\S+)", b)
    if sev and sev.group(1) not in ("critical", "warning", "info"):
        print(f"{name}: severity {sev.group(1)}"); bad = 1
if re.search(r"serial", "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#")), re.I):
    print("a rule uses a serial number"); bad = 1
sys.exit(bad)
EOF

# ------------------------------------------------------------------ Grafana dashboards
# One checker for both dashboards: what they share (datasource, ids, units, variables), then
# each one's filters: the node dashboard by instance and gpu, the job dashboard by cluster,
# job_id and instance.
cat > "$tmp/check_dashboard.py" <<'EOF'
import json, re, sys
kind, path = sys.argv[1], sys.argv[2]
d = json.load(open(path))
errors = []
err = errors.append
DS_UID = "${datasource}"
BUILTIN = {"__interval", "__interval_ms", "__rate_interval", "__range", "__range_s",
           "__range_ms", "__from", "__to", "__dashboard", "__user", "__org", "__name",
           "__timeFilter", "__auto", "timeFilter", "__all"}

if not isinstance(d.get("schemaVersion"), int) or d["schemaVersion"] < 36:
    err(f"schemaVersion {d.get('schemaVersion')} < 36")
inputs = d.get("__inputs") or []
if not any(i.get("name") == "DS_PROMETHEUS" and i.get("type") == "datasource"
           and i.get("pluginId") == "prometheus" for i in inputs):
    err("__inputs has no DS_PROMETHEUS prometheus datasource input")
if not d.get("uid") or not d.get("title"):
    err("no uid or title")

variables = {v.get("name"): v for v in d.get("templating", {}).get("list", [])}
ds = variables.get("datasource")
if not ds or ds.get("type") != "datasource" or ds.get("query") != "prometheus":
    err("no variable `datasource` of type datasource, query prometheus")
def vquery(v):
    q = (v or {}).get("query")
    return q.get("query", "") if isinstance(q, dict) else (q or "")
for name, v in variables.items():
    if v.get("type") == "query" and (v.get("datasource") or {}).get("uid") != DS_UID:
        err(f"variable `{name}` does not use ${{datasource}}")

def walk(panels):
    for p in panels or []:
        yield p
        yield from walk(p.get("panels"))
panels = list(walk(d.get("panels")))
if not panels:
    err("no panels")
ids = [p.get("id") for p in panels]
dups = sorted({i for i in ids if ids.count(i) > 1}, key=str)
if dups or None in ids:
    err(f"panel ids not unique or missing: {dups or ids}")

UNIT_OK = {"percentunit", "bytes", "watt", "celsius", "hertz", "short", "none", "s", "watth"}
SELECTOR = r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}"
BARE = r"\b((?:gpumon_|job:|job_rank:|up\b)[a-zA-Z0-9_:]*)(?![\w:{(])"
checked = []  # (row title, panel title, target) of every query target
row = None
for p in panels:
    title = p.get("title", f"id {p.get('id')}")
    if p.get("type") == "row":
        row = title
        if p.get("datasource") and p["datasource"].get("uid") != DS_UID:
            err(f"row {title!r}: datasource is not ${{datasource}}")
        continue
    if (p.get("datasource") or {}).get("uid") != DS_UID:
        err(f"panel {title!r}: datasource is not ${{datasource}}")
    targets = p.get("targets") or []
    if not targets:
        err(f"panel {title!r}: no targets")
    unit = ((p.get("fieldConfig") or {}).get("defaults") or {}).get("unit")
    if unit not in UNIT_OK:
        err(f"panel {title!r}: unit {unit!r} not set or unexpected")
    for t in targets:
        where = f"panel {title!r} target {t.get('refId')}"
        if (t.get("datasource") or {}).get("uid") != DS_UID:
            err(f"{where}: datasource is not ${{datasource}}")
        if not t.get("expr"):
            err(f"{where}: no expr")
        bare = re.findall(BARE, t.get("expr") or "")
        if bare:
            err(f"{where}: selector without label filter: {bare}")
        checked.append((row, title, where, t))

def matchers(s):
    return re.sub(r"\s", "", s)

if kind == "node":
    inst = variables.get("instance")
    if not inst or matchers(vquery(inst)) != "label_values(gpumon_gpu_info,instance)":
        err("variable `instance` is not label_values(gpumon_gpu_info, instance)")
    gpu = variables.get("gpu")
    if not gpu or matchers(vquery(gpu)) != 'label_values(gpumon_gpu_info{instance=~"$instance"},gpu)':
        err('variable `gpu` is not label_values(gpumon_gpu_info{instance=~"$instance"}, gpu)')
    elif not (gpu.get("multi") and gpu.get("includeAll")):
        err("variable `gpu` must be multi-value and include All")
    per_gpu = 0
    for _, _, where, t in checked:
        for metric, m in re.findall(SELECTOR, t.get("expr") or ""):
            m = matchers(m)
            if 'instance=~"$instance"' not in m:
                err(f"{where}: {metric} not filtered by instance=~\"$instance\"")
            if metric.startswith("gpumon_gpu_"):
                per_gpu += 1
                if 'gpu=~"$gpu"' not in m:
                    err(f"{where}: {metric} not filtered by gpu=~\"$gpu\"")
                legend = t.get("legendFormat", "")
                if t.get("format") != "table" and not legend.startswith("{{instance}} GPU {{gpu}}"):
                    err(f"{where}: legend {legend!r} does not start with '{{{{instance}}}} GPU {{{{gpu}}}}'")
    if per_gpu == 0:
        err("no per-GPU query found")
else:
    # Variables: cluster (optional: All matches series without the label), the job picker
    # over a training family's job_id, and the job's nodes.
    c, j, i = variables.get("cluster"), variables.get("job_id"), variables.get("instance")
    FAMILY = r"label_values\(gpumon_training_[a-z_]+"
    if not c or not re.fullmatch(FAMILY + r",cluster\)", matchers(vquery(c))):
        err("variable `cluster` is not label_values(gpumon_training_..., cluster)")
    elif not c.get("includeAll") or c.get("allValue") != ".*":
        err("variable `cluster` must include All, allValue .* (series without a cluster label)")
    if not j or not re.fullmatch(FAMILY + r'\{cluster=~"\$cluster"\},job_id\)',
                                 matchers(vquery(j))):
        err('variable `job_id` is not label_values(gpumon_training_...{cluster=~"$cluster"}, '
            'job_id)')
    elif j.get("includeAll"):
        err("variable `job_id` must not include All (a job picker)")
    if not i or not re.fullmatch(FAMILY + r'\{cluster=~"\$cluster",job_id=~"\$job_id"\},instance\)',
                                 matchers(vquery(i))):
        err('variable `instance` is not label_values(gpumon_training_...{cluster=~"$cluster", '
            'job_id=~"$job_id"}, instance)')
    elif not (i.get("multi") and i.get("includeAll")) or i.get("allValue"):
        err("variable `instance` must be multi-value with All and no allValue (All: the job's "
            "nodes)")
    rows = [p.get("title") for p in panels if p.get("type") == "row"]
    for need in ("Job overview", "Nodes", "Ranks"):
        if need not in rows:
            err(f"no row {need!r}")
    JOB_FAMILY = re.compile(r"(gpumon_training_|gpumon_gpu_job_|job:|job_rank:)")
    for row, title, where, t in checked:
        expr = t.get("expr") or ""
        sels = re.findall(SELECTOR, expr)
        if not sels:
            err(f"{where}: no selector")
        job_filtered = False
        for metric, m in sels:
            m = matchers(m)
            if 'cluster=~"$cluster"' not in m:
                err(f"{where}: {metric} not filtered by cluster=~\"$cluster\"")
            if JOB_FAMILY.match(metric):
                if 'job_id=~"$job_id"' not in m:
                    err(f"{where}: {metric} not filtered by job_id=~\"$job_id\"")
                job_filtered = True
            # Per node and per rank: the nodes picked. The job-wide series need none.
            if row != "Job overview" and not metric.startswith("job:") \
                    and 'instance=~"$instance"' not in m:
                err(f"{where}: {metric} not filtered by instance=~\"$instance\"")
        # A family without job_id (a GPU's) only joined to the job's GPUs or nodes.
        if any(not JOB_FAMILY.match(metric) for metric, _ in sels):
            joined = re.search(r"\band\s+on\s*\(\s*cluster\s*,\s*instance\b", expr)
            if not (job_filtered and joined):
                err(f"{where}: a family without job_id is not joined `and on (cluster, "
                    f"instance...)` to the job's series")
        legend = t.get("legendFormat", "")
        if t.get("format") == "table":
            continue
        if row == "Job overview" and "{{job_id}}" not in legend:
            err(f"{where}: legend {legend!r} does not name {{{{job_id}}}}")
        if row == "Nodes" and "by (cluster, instance" in expr \
                and not legend.startswith("{{instance}}"):
            err(f"{where}: legend {legend!r} does not start with {{{{instance}}}}")
        if row == "Ranks" and "by (" not in expr and "job:" not in expr.split("/")[0] \
                and "{{rank}}" not in legend:
            err(f"{where}: legend {legend!r} does not name {{{{rank}}}}")

# Every variable referenced anywhere is defined (or a Grafana built-in).
text = json.dumps({k: v for k, v in d.items() if k not in ("__inputs", "__requires")})
refs = set(re.findall(r"\$\{([A-Za-z0-9_]+)(?::[a-z]+)?\}|\$([A-Za-z_][A-Za-z0-9_]*)|\[\[([A-Za-z0-9_]+)\]\]", text))
for groups in refs:
    name = next(g for g in groups if g)
    if name == "DS_PROMETHEUS":
        continue
    if name not in variables and name not in BUILTIN:
        err(f"variable ${name} is referenced but not defined")

for e in errors:
    print(e)
sys.exit(1 if errors else 0)
EOF
check "dashboard is valid JSON" "$PYTHON" -m json.tool "$dashboard"
check "dashboard structure (datasource, ids, variables, filters, units)" \
  "$PYTHON" "$tmp/check_dashboard.py" node "$dashboard"
check "job dashboard is valid JSON" "$PYTHON" -m json.tool "$job_dashboard"
check "job dashboard structure (datasource, ids, cluster/job_id/instance filters, joins, units)" \
  "$PYTHON" "$tmp/check_dashboard.py" job "$job_dashboard"
check "the dashboards' uids differ" "$PYTHON" - "$dashboard" "$job_dashboard" <<'EOF'
import json, sys
uids = [json.load(open(p)).get("uid") for p in sys.argv[1:]]
print(uids)
sys.exit(0 if len(set(uids)) == len(uids) else 1)
EOF

# ------------------------------------------------------------------ dashboard_queries.py
queries="$tmp/queries.jsonl"
check "dashboard_queries.py runs" sh -c '"$1" "$2/dashboard_queries.py" > "$3"' sh "$PYTHON" "$here" "$queries"
check "dashboard_queries.py output: every target and rule, one JSON object a line" \
  "$PYTHON" - "$queries" "$rules" "$dashboard" "$job_dashboard" <<'EOF'
import json, re, sys
lines = open(sys.argv[1]).read().splitlines()
def walk(panels):
    for p in panels or []:
        yield p
        yield from walk(p.get("panels"))
ntargets = {}
for path in sys.argv[3:]:
    d = json.load(open(path))
    ntargets[d["uid"]] = sum(1 for p in walk(d.get("panels")) for t in p.get("targets") or []
                             if t.get("expr"))
nalerts = len(re.findall(r"^\s*-\s*alert:", open(sys.argv[2]).read(), re.M))
bad = 0
seen = {"dashboard": 0, "alert": 0, "variable": 0}
per_dashboard = {}
for n, line in enumerate(lines, 1):
    try:
        o = json.loads(line)
    except ValueError as e:
        print(f"line {n}: not JSON: {e}"); bad = 1; continue
    expr = o.get("expr")
    if not isinstance(expr, str) or not expr.strip():
        print(f"line {n}: no expr"); bad = 1; continue
    if "$" in expr or "[[" in expr:
        print(f"line {n}: variable left in {expr!r}"); bad = 1
    if not o.get("metrics"):
        print(f"line {n}: no metric found in {expr!r}"); bad = 1
    seen[o.get("source")] = seen.get(o.get("source"), 0) + 1
    if o.get("source") == "dashboard":
        per_dashboard[o.get("dashboard")] = per_dashboard.get(o.get("dashboard"), 0) + 1
        if o.get("dashboard") == "gpumon-job" and 'job_id=~".+"' not in expr:
            print(f"line {n}: $job_id not replaced by .+ in {expr!r}"); bad = 1
if per_dashboard != ntargets:
    print(f"dashboard expressions printed {per_dashboard}, targets {ntargets}"); bad = 1
if seen["alert"] != nalerts:
    print(f"{seen['alert']} alert expressions printed, {nalerts} alert rules"); bad = 1
if seen["variable"] < 5:
    print("the variables' selectors (instance, gpu; cluster, job_id, instance) are missing"); bad = 1
if '.*' not in "".join(lines) or '[5m]' not in "".join(lines):
    print("substitutions of $instance/$gpu or $__rate_interval not seen"); bad = 1
sys.exit(bad)
EOF
check "dashboard_queries.py --job-id puts the job in the job dashboard's queries" \
  sh -c '"$1" "$2/dashboard_queries.py" --job-id e2e-4711 | grep -q "job_id=~\\\\\"e2e-4711\\\\\""' \
  sh "$PYTHON" "$here"
check "dashboard_queries.py: the fallback rule reader agrees with PyYAML" \
  sh -c '
    if ! "$1" -c "import yaml" 2>/dev/null; then echo "(PyYAML missing: fallback only)"; exit 0; fi
    "$1" "$2/dashboard_queries.py" --parser yaml > "$3/yaml.jsonl" &&
    "$1" "$2/dashboard_queries.py" --parser simple > "$3/simple.jsonl" &&
    diff "$3/yaml.jsonl" "$3/simple.jsonl"' sh "$PYTHON" "$here" "$tmp"
check "every printed expression is valid PromQL (promtool)" \
  sh -c '
    "$1" - "$2" > "$3/exprs-rules.yml" <<"EOF2" && promtool check rules "$3/exprs-rules.yml"
import json, sys
print("groups:\n  - name: deploy-expressions\n    rules:")
for n, line in enumerate(open(sys.argv[1]), 1):
    expr = json.loads(line)["expr"]
    print(f"      - record: deploy_expression:{n}\n        expr: {json.dumps(expr)}")
EOF2
  ' sh "$PYTHON" "$queries" "$tmp"
check "every metric used is one docs/exporter.md names" \
  "$PYTHON" - "$here/dashboard_queries.py" "$root/docs/exporter.md" <<'EOF'
import re, subprocess, sys
used = subprocess.run([sys.executable, sys.argv[1], "--metrics"], check=True,
                      capture_output=True, text=True).stdout.split()
doc = open(sys.argv[2]).read()
# Recorded series are named level:metric:operations (job:gpumon_..._count): the whole name.
documented = set(re.findall(r"`((?:[a-z_]+:)?gpumon_[a-z0-9_]+(?::[a-z0-9_]+)?)", doc))
# "gpumon_gpu_pcie_tx_bytes_per_second` / `_rx_`" style shorthands are not needed here.
bad = [m for m in used if m != "up" and m not in documented]
for m in bad:
    print(f"{m}: not in docs/exporter.md")
print(f"{len(used)} metrics used")
sys.exit(1 if bad or not used else 0)
EOF

check "README.md lists exactly the metrics the files use" \
  "$PYTHON" - "$here/dashboard_queries.py" "$here/README.md" <<'EOF'
import re, subprocess, sys
used = set(subprocess.run([sys.executable, sys.argv[1], "--metrics"], check=True,
                          capture_output=True, text=True).stdout.split()) - {"up"}
text = open(sys.argv[2]).read()
section = text[text.index("Metric names these files use"):]
listed = set(re.findall(r"`((?:[a-z_]+:)?gpumon_[a-z0-9_]+(?::[a-z0-9_]+)?)`", section))
for m in sorted(used - listed):
    print(f"{m}: used but not listed in README.md")
for m in sorted(listed - used):
    print(f"{m}: listed in README.md but not used")
sys.exit(1 if used != listed else 0)
EOF

# ------------------------------------------------------------------ systemd unit
check "gpumon.service has the required settings" "$PYTHON" - "$unit" <<'EOF'
import sys
lines = [l.strip() for l in open(sys.argv[1]) if l.strip() and not l.lstrip().startswith("#")]
need = ["ExecStart=/usr/local/bin/gpumon serve --listen 127.0.0.1:9477", "ProtectSystem=strict",
        "NoNewPrivileges=yes", "PrivateTmp=yes", "ProtectHome=read-only",
        "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6", "Restart=on-failure"]
bad = [f"missing: {n}" for n in need if n not in lines]
if not any(l in ("DynamicUser=yes", "User=gpumon") for l in lines):
    bad.append("missing: DynamicUser=yes or User=gpumon")
# These hide /dev/nvidia* from the service.
for hide in ("PrivateDevices=yes", "PrivateDevices=true", "ProtectClock=yes", "ProtectClock=true"):
    if hide in lines:
        bad.append(f"{hide} hides the GPUs")
if "DevicePolicy=closed" in lines and not any(l.startswith("DeviceAllow=char-nvidia") for l in lines):
    bad.append("DevicePolicy=closed without DeviceAllow= for the NVIDIA devices")
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
if command -v systemd-analyze >/dev/null 2>&1; then
  # verify wants ExecStart to exist: point it at a stub. Its warnings go to stderr with exit 0,
  # so any line about our unit is a failure (lines about other units on the host are not ours).
  check "systemd-analyze verify gpumon.service" sh -c '
    mkdir -p "$1/unit" && printf "#!/bin/sh\n" > "$1/unit/gpumon" && chmod +x "$1/unit/gpumon" &&
    sed "s#/usr/local/bin/gpumon#$1/unit/gpumon#g" "$2" > "$1/unit/gpumon.service" &&
    out=$(systemd-analyze verify "$1/unit/gpumon.service" 2>&1); rc=$?
    echo "$out"
    [ $rc -eq 0 ] && ! echo "$out" | grep -q "gpumon"' sh "$tmp" "$unit"
else
  echo "skip systemd-analyze verify (systemd-analyze not installed)"
fi

echo "check_deploy: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
