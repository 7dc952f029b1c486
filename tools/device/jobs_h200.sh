#!/usr/bin/env bash
# Jobs on the real H200, one call (about 2 min after the build):
#   1. the job identity as the node reads it: this machine's /proc/self/cgroup, and the `job`
#      of a CUDA process in `gpumon snapshot --json` (Slurm, pod or container, as the machine has)
#   2. one job on two "nodes": two `gpumon record`s, each with its own XDG_RUNTIME_DIR (agent
#      socket) and GPUMON_HOSTNAME (node-0, node-1), each running one rank of a 2-rank gloo DDP
#      job on cuda:0 (job_ddp.py, JOB_STEPS steps, default 600); then `gpumon doctor` and
#      `gpumon report` over both recordings: the job joined, the clocks (one machine: offset
#      near 0), and what is found across the two nodes.
# Results: $OUT/results.tgz (r/log.txt, r/cgroup.txt, r/snapshot.json, r/node-*.txt,
# r/doctor.json, r/doctor.txt, r/job.html) and $OUT/h200-job-node-{0,1}.gpumon.
# DEVDEPS: see build_env.sh (carry .devdeps, made by make_devdeps.sh).
# Dry run without a GPU: JOBS_NO_BUILD=1 GPUMON_BINARY=build/gpumon JOB_DEVICE=cpu (with the fake
# NVML's GPUMON_NVML_LIBRARY and GPUMON_FAKE_SCENARIO; part 1 then finds no CUDA process).
set -uo pipefail
DEVDEPS=${DEVDEPS:-$PWD/.devdeps}
src=$PWD
. tools/device/build_env.sh
device_results /tmp/gpumon-jobs
if [ -z "${JOBS_NO_BUILD:-}" ]; then
  log "build"
  gpumon_build /tmp/gpumon-build --python -- gpumon gpumon_python || exit 1
  g=/tmp/gpumon-build/gpumon
else
  g=$(realpath "${GPUMON_BINARY:?JOBS_NO_BUILD needs GPUMON_BINARY}")
fi
export PYTHONPATH="$src/python" GPUMON_BINARY="$g" GPUMON_PYTHON_DIR="$src/python" PYTHONUNBUFFERED=1
log "built in $SECONDS s"

# 1. What the node reads of a CUDA process's job.
cat /proc/self/cgroup >"$res/cgroup.txt" 2>&1
env | grep -E '^(SLURM_|KUBERNETES_|POD_|HOSTNAME=)' | sed 's/=.*TOKEN.*/=.../' >"$res/env.txt"
python3 -c 'import torch,time; x=torch.ones(1,device="cuda"); time.sleep(20)' 2>/dev/null &
holder=$!
for _ in $(seq 1 100); do
  [ -n "${JOB_DEVICE:-}" ] && break
  nvidia-smi --query-compute-apps=pid --format=csv,noheader | grep -q . && break
  sleep 0.2
done
"$g" --json >"$res/snapshot.json" 2>"$res/snapshot.err"
kill $holder 2>/dev/null; wait $holder 2>/dev/null
log "snapshot: $(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print([(p.get("pid"), p.get("job")) for p in j.get("processes",[])])' "$res/snapshot.json" 2>&1)"

# 2. Two nodes of one job on this machine.
port=$((29000 + RANDOM % 1000))
steps=${JOB_STEPS:-600}
pids=()
for n in 0 1; do
  home=/tmp/job-node-$n
  rm -rf "$home"; mkdir -p "$home"; chmod 700 "$home"
  XDG_RUNTIME_DIR=$home GPUMON_HOSTNAME=node-$n GPUMON_JOB_ID=h200-job \
    RANK=$n LOCAL_RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    timeout 300 "$g" record -o "$out/h200-job-node-$n.gpumon" --interval 100 -- \
    python3 "$src/tools/device/job_ddp.py" "$steps" >"$res/node-$n.txt" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; echo "rc=$?" >>"$res/log.txt"; done
log "recorded: $(grep -h done "$res"/node-*.txt | tr '\n' ' ')"
"$g" doctor "$out"/h200-job-node-0.gpumon "$out"/h200-job-node-1.gpumon --json \
  >"$res/doctor.json" 2>>"$res/log.txt"
"$g" doctor "$out"/h200-job-node-0.gpumon "$out"/h200-job-node-1.gpumon \
  >"$res/doctor.txt" 2>>"$res/log.txt"
"$g" report "$out"/h200-job-node-0.gpumon "$out"/h200-job-node-1.gpumon -o "$res/job.html" \
  >>"$res/log.txt" 2>&1
python3 - "$res/doctor.json" <<'PYEOF' | tee -a "$res/log.txt"
import json, sys
j = json.load(open(sys.argv[1]))
print("job", j["job"], "health", j["health_score"], "nodes",
      [(n["name"], n["ranks"], n["clock"]) for n in j["nodes"]])
print("across", [(f["id"], f["summary"]) for f in j["findings"]])
for n in j["nodes"]:
    print(n["name"], [(f["id"], f["severity"]) for f in n["diagnosis"]["findings"]])
PYEOF
ls -la "$out" >>"$res/log.txt"
log "done in $SECONDS s"
