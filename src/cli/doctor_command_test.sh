#!/bin/sh
# SPDX-License-Identifier: MIT
# `gpumon doctor` end to end: the real H200 GEMM recording is healthy (no warning, score 100);
# 45 s of the demo scenario finds GPU 5's thermal throttling, and GPU 3's one corrected ECC
# error (its counter steps at 40 s) as information that costs no points; a recording killed
# before it was closed says so, and one without data has no score; a recorded command that
# exits with an error or is killed is a run_failed finding; bad use and unreadable files give 2
# and 1.
# usage: doctor_command_test.sh GPUMON FAKE_NVML_LIBRARY H200_RECORDING
g=$1
fake=$2
h200=$3
d=$(mktemp -d)
. "$(dirname "$0")/../util/testing/wait_for.sh"
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; cat "$d/out" "$d/err" 2>/dev/null; exit 1; }
py() { /usr/bin/python3 -c "$1" "$d/out" || fail "$2"; }

"$g" doctor "$h200" --json >"$d/out" 2>"$d/err" || fail "doctor on the H200 recording"
py 'import json,sys; j=json.load(open(sys.argv[1])); assert j["schema"]==1 and j["health_score"]==100 and j["simulated"] is None, j; assert not [f for f in j["findings"] if f["severity"]!="info"], j' \
  "the healthy H200 run has a warning"
"$g" doctor "$h200" >"$d/out" 2>"$d/err" || fail "text doctor"
grep -q "health score: 100/100" "$d/out" || fail "no score line"

GPUMON_NVML_LIBRARY=$fake GPUMON_FAKE_SCENARIO=demo \
  "$g" record -o "$d/demo.gpumon" --interval 100 -- sleep 45 2>"$d/err" || fail "record demo"
"$g" doctor "$d/demo.gpumon" --json >"$d/out" 2>"$d/err" || fail "doctor on demo"
py 'import json,sys
j=json.load(open(sys.argv[1])); w={f["id"]:f for f in j["findings"] if f["severity"]!="info"}
assert set(w)=={"throttled"}, sorted(w)
assert w["throttled"]["gpus"]==[5] and w["throttled"]["evidence"]["cause"]=="thermal", w["throttled"]
ecc=[f for f in j["findings"] if f["id"]=="ecc_errors"]
assert len(ecc)==1 and ecc[0]["severity"]=="info" and ecc[0]["gpus"]==[3], ecc
assert ecc[0]["deduction"]==0 and ecc[0]["evidence"]["corrected"]==1, ecc
assert j["health_score"]==100-w["throttled"]["deduction"], j
assert j["simulated"]=="demo", j["simulated"]' "demo findings"
"$g" doctor "$d/demo.gpumon" >"$d/out" 2>"$d/err" || fail "text doctor on demo"
head -1 "$d/out" | grep -q "^SIMULATED GPUs (scenario demo)" || fail "text doctor: no SIMULATED label first"
"$g" doctor "$d/demo.gpumon" --min-severity critical --json >"$d/out" || fail "--min-severity"
py 'import json,sys; assert json.load(open(sys.argv[1]))["findings"]==[]' "--min-severity critical"

GPUMON_NVML_LIBRARY=$fake GPUMON_FAKE_SCENARIO=demo \
  "$g" record -o "$d/cut.gpumon" --interval 100 2>"$d/err" &
rec=$!
has_samples() { [ "$("$g" export "$d/cut.gpumon" --format csv 2>/dev/null | wc -l)" -gt 1 ]; }
wait_for has_samples || { kill -9 $rec; fail "the recording never had a sample"; }
kill -9 $rec
wait $rec 2>/dev/null  # its status is the kill's: not checked
"$g" doctor "$d/cut.gpumon" --json >"$d/out" 2>"$d/err" || fail "doctor on a killed recording"
py 'import json,sys; j=json.load(open(sys.argv[1])); f=j["findings"][0]
assert f["id"]=="recording_cut_short" and f["deduction"]==0, f
assert "cover only the data up to" in f["summary"], f' "a killed recording must say it was cut short"
/usr/bin/python3 -c 'import sqlite3,sys
src=sqlite3.connect(sys.argv[1]); dst=sqlite3.connect(sys.argv[2]); src.backup(dst)
dst.executescript("DELETE FROM sample_chunks; DELETE FROM steps"); dst.commit()' \
  "$d/cut.gpumon" "$d/nodata.gpumon" || fail "making a recording without data"
"$g" doctor "$d/nodata.gpumon" --json >"$d/out" 2>"$d/err" || fail "doctor without data"
py 'import json,sys; j=json.load(open(sys.argv[1]))
assert j["health_score"] is None and j["findings"][0]["id"]=="no_data", j' "no data must give no score"
"$g" doctor "$d/nodata.gpumon" >"$d/out" 2>"$d/err" || fail "text doctor without data"
grep -q "health score: n/a (no data)" "$d/out" || fail "no data: the text must say n/a"

# How the recorded command ended is a finding: an error exit, and a kill by a signal.
GPUMON_NVML_LIBRARY=$fake GPUMON_FAKE_SCENARIO=demo \
  "$g" record -o "$d/exit3.gpumon" --interval 100 -- sh -c 'sleep 1; exit 3' 2>"$d/err"
[ $? = 3 ] || fail "record must return the command's status"
"$g" doctor "$d/exit3.gpumon" --json >"$d/out" 2>"$d/err" || fail "doctor on a failed run"
py 'import json,sys
j=json.load(open(sys.argv[1])); f=[f for f in j["findings"] if f["id"]=="run_failed"]
assert len(f)==1 and f[0]["severity"]=="critical" and f[0]["evidence"]["exit_status"]==3, f
assert "exited with status 3" in f[0]["summary"], f[0]["summary"]' "an error exit must be run_failed"
GPUMON_NVML_LIBRARY=$fake GPUMON_FAKE_SCENARIO=demo \
  "$g" record -o "$d/killed.gpumon" --interval 100 -- sh -c 'sleep 1; kill -9 $$' 2>"$d/err"
[ $? = 137 ] || fail "record must return 128 + the signal"
"$g" doctor "$d/killed.gpumon" >"$d/out" 2>"$d/err" || fail "doctor on a killed run"
grep -q "killed by SIGKILL (exit status 137)" "$d/out" || fail "a kill must say the signal"

"$g" doctor 2>"$d/err"
[ $? = 2 ] || fail "no file must be a usage error"
"$g" doctor "$h200" --min-severity loud 2>"$d/err"
[ $? = 2 ] || fail "a bad severity must be a usage error"
"$g" doctor "$d/none.gpumon" 2>"$d/err"
[ $? = 1 ] || fail "a missing file must give 1"
grep -q "none.gpumon" "$d/err" || fail "the message must name the file"
echo "not a recording" >"$d/bad.gpumon"
"$g" doctor "$d/bad.gpumon" 2>"$d/err"
[ $? = 1 ] || fail "a file that is not a recording must give 1"
# A job's two nodes recorded on the real H200 (tools/device/jobs_h200.sh: two records, one
# rank each of a gloo job on cuda:0): joined on one clock, healthy; the other node's rank on
# the shared GPU is the job's own process, not foreign memory.
nodes=$(dirname "$h200")/h200-job-node
"$g" doctor "$nodes-0.gpumon" "$nodes-1.gpumon" --json >"$d/out" 2>"$d/err" || fail "doctor on a job"
py 'import json,sys; j=json.load(open(sys.argv[1]))
assert j["job"]=="h200-job" and [n["ranks"] for n in j["nodes"]]==[[0],[1]], j
c=j["nodes"][1]["clock"]; assert c["applied"] and abs(c["offset_s"])<0.005 and c["common_steps"]==600, c
assert j["health_score"]==100 and j["findings"]==[], j["findings"]
for n in j["nodes"]: assert not [f for f in n["diagnosis"]["findings"] if f["severity"]!="info"], n' \
  "the H200 job's two nodes"
echo "doctor: ok"
