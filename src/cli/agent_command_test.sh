#!/bin/sh
# SPDX-License-Identifier: MIT
# `gpumon agent` and `gpumon record -- CMD` end to end on the demo scenario, with clients
# written in plain Python (standard library): three ranks at once, a malformed client dropped
# without stopping the agent, a client killed mid-message, SIGTERM, and the steps exported
# exactly as sent; CMD under `gpumon record` finds GPUMON_AGENT_SOCKET, and record logs live
# findings.
# usage: agent_command_test.sh GPUMON FAKE_NVML_LIBRARY PYTHON
g=$1
py=$3
export GPUMON_NVML_LIBRARY=$2 GPUMON_FAKE_SCENARIO=demo
d=$(mktemp -d)
agent=
trap '[ -n "$agent" ] && kill "$agent" 2>/dev/null; rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; cat "$d/err" 2>/dev/null; exit 1; }
waiting="$(dirname "$0")/../util/testing/wait_for.sh"
. "$waiting"

cat >"$d/client.py" <<'PY'
import json, os, socket, sys, time
path, rank, steps, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
s = socket.socket(socket.AF_UNIX)
s.connect(path)
def send(obj):
    s.sendall((json.dumps(obj) + "\n").encode())
send({"type": "hello", "pid": os.getpid(), "rank": rank, "local_rank": rank, "world_size": 3,
      "device": "cpu"})
for n in range(steps):
    t = 1764446400.0 + rank * 1000 + n * 0.25
    send({"type": "step", "step": n, "t_start": t, "t_end": t + 0.125, "cpu_step_s": 0.125,
          "gpu_step_s": None, "data_wait_s": 0.0625, "mem": None})
if mode == "garbage":
    s.sendall(b"{not json\n")
    time.sleep(0.2)
elif mode == "cut":
    s.sendall(b'{"type":"step","step":999,"t_st')
    time.sleep(0.1)
    os._exit(0)  # dies mid-message
else:
    send({"type": "bye"})
s.close()
PY

sock="$d/agent.sock"
"$g" agent --socket "$sock" -o "$d/a.gpumon" --interval 100 2>"$d/err" &
agent=$!
wait_for test -S "$sock" || fail "the agent did not listen"
[ "$(stat -c %a "$sock")" = 600 ] || fail "socket mode $(stat -c %a "$sock"), not 600"
"$py" "$d/client.py" "$sock" 0 40 ok &
"$py" "$d/client.py" "$sock" 1 40 garbage &
"$py" "$d/client.py" "$sock" 2 40 cut &
wait %2 %3 %4 2>/dev/null || wait
"$g" agent --socket "$sock" 2>"$d/err2" && fail "a second agent took a live socket"
grep -q "already listens" "$d/err2" || fail "no 'already listens' message"
"$py" "$d/client.py" "$sock" 0 0 ok || fail "the agent stopped after a bad client"
# The agent stops without reading what its clients may still have in flight: first its
# recording (a commit every half second) holds every step and the last client's bye (that client came
# after the second agent's probe, so the probe was accepted too).
recorded() {
  [ "$("$g" export "$d/a.gpumon" --steps --format csv 2>/dev/null | wc -l)" = 121 ] &&
    [ "$("$g" export "$d/a.gpumon" --table rank_events --format jsonl 2>/dev/null |
      grep -c '"kind":"bye"')" = 2 ]
}
wait_for recorded || fail "the clients' steps and byes did not reach the recording"
kill -TERM "$agent"
wait "$agent" || fail "the agent exited with $? on SIGTERM"
agent=
[ -e "$sock" ] && fail "the socket is left behind"
# 5 clients: the three ranks, the late one, and the second agent's probe of the socket.
grep -q "120 steps from 5 clients, 1 dropped" "$d/err" || fail "summary: $(tail -1 "$d/err")"

"$g" export "$d/a.gpumon" --steps --format csv >"$d/steps.csv" || fail "export --steps"
[ "$(wc -l <"$d/steps.csv")" = 121 ] || fail "$(wc -l <"$d/steps.csv") lines, not 1 + 120"
grep -q '^2025-11-29T20:16:49.875Z,[0-9]*,1,1,3,cpu,39,1764447409.75,1764447409.875,0.125,,0.0625,,,,,,,,$' "$d/steps.csv" ||
  fail "rank 1's last step is not exported exactly"
"$g" export "$d/a.gpumon" --table rank_events --format jsonl >"$d/events.jsonl"
grep -q '"kind":"dropped","detail":{"reason":"not JSON' "$d/events.jsonl" || fail "no dropped event"
grep -q '"rank":2,"kind":"disconnect"' "$d/events.jsonl" || fail "no disconnect for rank 2"
[ "$(grep -c '"kind":"bye"' "$d/events.jsonl")" = 2 ] || fail "not two byes"
"$g" export "$d/a.gpumon" --format csv | head -2 | tail -1 | grep -q ',0,' || fail "no samples"

# gpumon record -- CMD: CMD sees the socket and its steps land in the recording.
"$g" record -o "$d/r.gpumon" --interval 100 -- \
  sh -c 'echo "$GPUMON_AGENT_SOCKET" >"$2"; "$0" "$1" "$GPUMON_AGENT_SOCKET" 0 5 ok' \
  "$py" "$d/client.py" "$d/record-socket" 2>"$d/err" ||
  fail "record -- client failed"
grep -q "5 training steps" "$d/err" || fail "record summary: $(tail -1 "$d/err")"
[ "$("$g" export "$d/r.gpumon" --steps | wc -l)" = 6 ] || fail "record: not 5 steps"
grep -q 'record-[0-9]*\.sock$' "$d/record-socket" || fail "socket: $(cat "$d/record-socket")"
[ -e "$(cat "$d/record-socket")" ] && fail "record left its socket behind"

# gpumon record diagnoses live too: the xid scenario's XID 13 on GPU 0 (at 3 s) is logged by
# the first evaluation, at 5 s. The command runs until it sees that line in record's stderr.
GPUMON_FAKE_SCENARIO=xid "$g" record -o "$d/x.gpumon" --interval 100 -- \
  sh -c '. "$0"; wait_for grep -q "^gpumon record: .* xid gpu 0" "$1"' "$waiting" "$d/err" \
  2>"$d/err" || fail "record: no live xid finding logged"
grep -q "^gpumon record: .* xid gpu 0" "$d/err" || fail "record: no live xid finding logged"
"$g" record --help | grep -q -- "--no-diagnose" || fail "record --help: no --no-diagnose"

# --log-format json: the same run's log is one JSON object per line, the finding among them.
GPUMON_FAKE_SCENARIO=xid "$g" record --log-format json -o "$d/j.gpumon" --interval 100 -- \
  sh -c '. "$0"; wait_for grep -q "\"event\":\"finding\".*\"id\":\"xid\"" "$1"' "$waiting" \
  "$d/err" 2>"$d/err" || fail "record --log-format json: no xid finding line"
"$py" - "$d/err" <<'PY' || fail "record --log-format json: $(cat "$d/err")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
events = [l["event"] for l in lines]
assert all(l["command"] == "record" and l["time"].endswith("Z") for l in lines), lines
assert "simulated" in events and "stopped" in events, events
xid = next(l for l in lines if l["event"] == "finding" and l["id"] == "xid")
assert xid["state"] == "appeared" and 0 in xid["gpus"] and xid["advice"], xid
PY
"$g" agent --log-format yaml 2>"$d/err" && fail "agent took --log-format yaml"
grep -q -- "--log-format takes text or json" "$d/err" || fail "bad --log-format: $(cat "$d/err")"
echo "agent: ok"
