#!/usr/bin/env bash
# The PyTorch integration and the diagnoses' real cases on the GPU machine,
# one part per device call:
#   pytorch_h200.sh planted   build; the planted single-GPU runs of tools/device/planted.py,
#                             each recorded; mon.step() cost (bench/step_cost.py)
#   pytorch_h200.sh runs      build; the examples on CUDA (plain, DDP world 1, Lightning, Hugging
#                             Face, C++/libtorch when it builds), each recorded; deliberate OOMs
#                             (tools/device/oom_h200.py); bench/training_overhead.py on the gemm
#                             loop with the `import gpumon` arm beside the seed's pynvml thread
#   pytorch_h200.sh ddp       (two-GPU kind) build; examples/train_ddp.py on 2 GPUs with NCCL;
#                             planted imbalance and ddp-healthy with torchrun; a single-GPU run
#                             on a two-GPU machine (GPU 1 left idle); the leak, near-oom and
#                             fragmentation runs again
#   pytorch_h200.sh clock     build; mon.step() cost with the C++ step clock and, when old/ holds
#                             the previous python/ and bench/, with the pure-Python step path;
#                             training_overhead.py on the gemm and launch loops
#   pytorch_h200.sh ab        build; bench/inloop_ab.py on the launch and gemm loops
#   pytorch_h200.sh ablaunch  build; bench/inloop_ab.py on the launch loop for AB_SECONDS
#                             (default 100) in halves of AB_STEPS steps (default 20)
#   pytorch_h200.sh abdiag    build; the launch loop's A/B with the agent on any CPU or on the
#                             training CPUs, an A/A control, without bounded-rate reads, and
#                             with longer halves
#   pytorch_h200.sh abfinal   build; mon.step() cost, then the launch loop's A/B (halves of 10
#                             steps, agent on any CPU) for AB_SECONDS (default 300)
#   pytorch_h200.sh abnull    build; the same A/B with a reader that discards the steps in place
#                             of the agent (the cost inside the training process alone)
#   pytorch_h200.sh coldab    build; bench/cold_step_cost.py, the launch loop's in-loop cost
#                             (training_overhead.py, 8 blocks) and its A/B in 40-step halves
#                             for AB_SECONDS (default 240)
#   pytorch_h200.sh handover  build; the launch loop's in-loop cost (training_overhead.py, 8
#                             blocks) and its A/B in 40-step halves for AB_SECONDS (default 380),
#                             the hand-over in C++ and an agent that reads on its clock
#   pytorch_h200.sh inert     build; perf's availability; the launch loop's A/B in 10-step
#                             halves with gpumon's calls inert (clock off), then with them on,
#                             AB_SECONDS (default 200) each: where the main thread's CPU goes
#                             (AB_ARMS picks the arms: see ab_arm_args, e.g. AB_ARMS="gpumon
#                             gpumon-oom1 gpumon-ho1" for the next bisect)
#   pytorch_h200.sh abpool    build; the step clock's cold bench (TSC against steady_clock, 3
#                             runs), then the launch loop's 10-step A/B, AB_ROUNDS rounds of each
#                             of AB_ARMS (default "gpumon control"), AB_SECONDS each, into files
#                             that inloop_ab.py --pool joins
#   pytorch_h200.sh abboth    build; the launch loop's 10-step A/B (gpumon, control, gpumon;
#                             AB_SECONDS each), then the GEMM loop's (unpinned, AB_SECONDS)
#   pytorch_h200.sh check     build; examples/train_plain.py on CUDA, recorded; deliberate OOMs
#   pytorch_h200.sh launch    build; mon.step() cost; the launch loop pinned to CPUs 2-5 (12
#                             short blocks), then
#                             the gemm loop (8 blocks), with the in-loop cost of gpumon's calls
# Results go to $OUT/results.tgz (only a few files come back). The build lives in
# /tmp/gpumon-build, so a warm machine reuses it. DEVDEPS: see build_env.sh.
set -uo pipefail
part=${1:-planted}
out=${OUT:-/tmp/gpumon-pytorch}; mkdir -p "$out/r"
res="$out/r"
src=$(pwd)
log() { echo "[$(date +%T)] $*" | tee -a "$res/log.txt"; }
finish() { tar -czf "$out/results.tgz" -C "$out" r; }
trap finish EXIT

bdir=/tmp/gpumon-build
. "$src/tools/device/build_env.sh"
log "build ($part)"
gpumon_build "$bdir" --python -DGPUMON_BUILD_BENCH=ON -- \
  gpumon gpumon_python gpumon_fake_nvml gpumon_bench_step_clock_cold || exit 1
g=$bdir/gpumon
export PYTHONPATH="$src/python" GPUMON_BINARY="$g"
python3 -c "import gpumon._gpumon" 2>>"$res/log.txt" || log "WARNING: _gpumon does not import"
nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id,memory.total --format=csv >"$res/gpu.txt" 2>&1
{ cat /sys/devices/system/clocksource/clocksource0/current_clocksource; grep -m1 -o -w -E "constant_tsc|nonstop_tsc|tsc_known_freq" /proc/cpuinfo | sort -u | tr "\n" " "; echo; } >"$res/clocksource.txt" 2>&1
pip list 2>/dev/null | grep -i -E "^(torch|lightning|pytorch-lightning|transformers|accelerate) " >"$res/versions.txt"

# rec NAME SECONDS CMD...: CMD under `gpumon record` (10 Hz), its output in NAME.txt.
rec() {
  local name=$1 limit=$2; shift 2
  log "run $name"
  timeout "$limit" "$g" record -o "$res/$name.gpumon" --interval 100 -- "$@" >"$res/$name.txt" 2>&1
  log "  $name: exit $? steps $("$g" export "$res/$name.gpumon" --steps --format jsonl 2>/dev/null | wc -l)"
}

# ab NAME SECONDS ARGS...: the launch loop's A/B (bench/inloop_ab.py, pinned to CPUs 2-5; AB_LAYERS
# layers, default 24: a 4.5-5 ms step) into ab-NAME.json, with a one-line summary in the log.
ab() {
  local name=$1 s=$2; shift 2
  timeout $((s + 60)) python3 bench/inloop_ab.py --gpumon "$g" --loop launch --pairs 100000 \
    --layers "${AB_LAYERS:-24}" --cpus 2-5 --max-seconds "$s" --out "$res/ab-$name.json" "$@" \
    >"$res/ab-$name.txt" 2>&1
  log "  $name: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); m=d["main_thread_cpu_slowdown_pct"]; print(d["pairs"], "pairs, wall median %.2f %s total %.2f %s; cpu median %.2f %s; agent %.1f %% of a core" % (d["slowdown_pct_median"], [round(x, 2) for x in d["slowdown_pct_ci95"]], d["slowdown_pct_total"], [round(x, 2) for x in d["slowdown_pct_total_ci95"]], m["median"], [round(x, 2) for x in m["ci95"]], d["agent_cpu_pct_of_a_core"]))' "$res/ab-$name.json" 2>&1)"
}
# ab_arm_args NAME: inloop_ab.py's arguments for an AB_ARMS name, a base arm (gpumon, inert,
# control) with suffixes: -nbr (no allocator stats or CUDA events), -oom1 (an OOM ring of one
# step), -ho1 (a hand-over a second), -ho02 (a hand-over every 0.2 s, the default before
# b1a3fab), -away (the agent pinned to CPUs 8-15, away from the
# training's 2-5), -null (a reader that discards the steps in place of the agent), -nofetch
# (the half without gpumon fetches no batch, as every run before inloop_ab.py's --baseline);
# e.g. gpumon-oom1-ho1.
ab_arm_args() {
  local name=$1 args=()
  while :; do
    case "$name" in
      *-nbr) args+=(--no-bounded-reads); name=${name%-nbr} ;;
      *-nofetch) args+=(--baseline none); name=${name%-nofetch} ;;
      *-oom1) args+=(--oom-steps 1); name=${name%-oom1} ;;
      *-ho1) args+=(--hand-over-s 1); name=${name%-ho1} ;;
      *-ho02) args+=(--hand-over-s 0.2); name=${name%-ho02} ;;
      *-away) args+=(--agent-cpus 8-15); name=${name%-away} ;;
      *-null) args+=(--null-agent); name=${name%-null} ;;
      *) break ;;
    esac
  done
  echo --arm "$name" "${args[@]}"
}
# inloop_launch: gpumon's calls timed inside the launch loop (bench/training_overhead.py, 8 blocks).
inloop_launch() {
  timeout 120 python3 bench/training_overhead.py --gpumon "$g" --loop launch --blocks 8 \
    --seconds 1.5 --cpus 2-5 --arms off,off-control,gpumon-python-10hz --out "$res" \
    >"$res/overhead-launch.txt" 2>&1
  log "  in-loop: $(grep -A12 '"gpumon-python-10hz"' "$res/overhead-launch.json" | grep in_loop_wall_us | tr -d '\n ')"
}

if [ "$part" = planted ]; then
  for k in healthy healthy-long slow-loader launch-bound leak cache fragmentation near-oom; do
    rec "planted-$k" 60 python3 tools/device/planted.py "$k" --seconds 25
  done
  log "mon.step() cost"
  export XDG_RUNTIME_DIR=/tmp/xdg; mkdir -p "$XDG_RUNTIME_DIR"
  timeout 100 python3 bench/step_cost.py --device cuda --blocks 10 --out "$res/step-cost.json" >"$res/step-cost.txt" 2>&1
  log "  $(grep -A1 '"gpumon"' "$res/step-cost.json" | tail -1)"
  unset XDG_RUNTIME_DIR
elif [ "$part" = runs ]; then
  rec example-plain 60 python3 examples/train_plain.py --device cuda --steps 300
  rec example-ddp1 60 python3 -m torch.distributed.run --standalone --nproc_per_node 1 examples/train_ddp.py --device cuda --steps 200
  rec example-lightning 90 python3 examples/train_lightning.py --device cuda --steps 200
  rec example-hf 90 python3 examples/train_hf.py --device cuda --steps 100
  log "callback tests with the real Lightning and transformers"
  GPUMON_TEST_BINARY="$g" GPUMON_TEST_FAKE_NVML="$bdir/fake-nvml/libnvidia-ml.so.1" timeout 120 \
    python3 -m pytest -q -p no:cacheprovider python/tests/test_callbacks.py >"$res/callbacks-real.txt" 2>&1
  log "  $(tail -1 "$res/callbacks-real.txt")"
  if [ -f tools/device/oom_h200.py ]; then
    log "deliberate OOMs"
    mkdir -p "$res/oom"
    timeout 100 python3 tools/device/oom_h200.py --out "$res/oom" >"$res/oom.txt" 2>&1
    log "  oom_h200.py exit $?; $(ls "$res/oom" | tr '\n' ' ')"
  fi
  log "overhead gemm"
  timeout 150 python3 bench/training_overhead.py --gpumon "$g" --loop gemm --blocks 8 \
    --seconds 2.5 --arms off,off-control,gpumon-python-10hz,seed-thread-10hz --out "$res" \
    >"$res/overhead-gemm.txt" 2>&1
  log "  $(grep -A3 '"gpumon-python-10hz"' "$res/overhead-gemm.json" | tr -d '\n ' | head -c 300)"
  # The C++ client's libtorch example, if the pip torch's CMake package builds here.
  tp=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
  if timeout 120 cmake -S "$src" -B "$bdir" -DCMAKE_PREFIX_PATH="$tp" >"$res/cmake-torch.txt" 2>&1 &&
     timeout 120 cmake --build "$bdir" -j 16 --target train_libtorch >"$res/build-torch.txt" 2>&1; then
    ex=$(find "$bdir" -name train_libtorch -type f -perm -u+x | head -1)
    rec example-libtorch 40 "$ex" --steps 300
  else
    log "libtorch example not built here (see cmake-torch.txt, build-torch.txt)"
  fi
elif [ "$part" = final ]; then  # after the client's write coalescing and GPU-timing rate
  log "mon.step() cost"
  export XDG_RUNTIME_DIR=/tmp/xdg; mkdir -p "$XDG_RUNTIME_DIR"
  timeout 100 python3 bench/step_cost.py --device cuda --blocks 8 --out "$res/step-cost.json" >"$res/step-cost.txt" 2>&1
  unset XDG_RUNTIME_DIR
  log "overhead gemm"
  timeout 110 python3 bench/training_overhead.py --gpumon "$g" --loop gemm --blocks 6 \
    --seconds 2.5 --arms off,off-control,gpumon-python-10hz,seed-thread-10hz --out "$res" \
    >"$res/overhead-gemm.txt" 2>&1
elif [ "$part" = clock ]; then  # after the step clock moved into C++ (src/client/step_clock.h)
  export XDG_RUNTIME_DIR=/tmp/xdg; mkdir -p "$XDG_RUNTIME_DIR"
  log "mon.step() cost, C++ step clock"
  timeout 100 python3 bench/step_cost.py --device cuda --blocks 10 --out "$res/step-cost.json" >"$res/step-cost.txt" 2>&1
  log "  $(grep -A2 '"gpumon"' "$res/step-cost.json" | tail -1)"
  if [ -d old/python ]; then  # the same bench on the previous, pure-Python step path
    cp python/gpumon/_gpumon*.so old/python/gpumon/
    log "mon.step() cost, Python step path (old/)"
    timeout 100 python3 old/bench/step_cost.py --device cuda --blocks 10 --out "$res/step-cost-python.json" >"$res/step-cost-python.txt" 2>&1
    log "  $(grep -A2 '"gpumon"' "$res/step-cost-python.json" | tail -1)"
  fi
  unset XDG_RUNTIME_DIR
  for loop in gemm launch; do
    log "overhead $loop"
    timeout 130 python3 bench/training_overhead.py --gpumon "$g" --loop $loop --blocks 8 \
      --seconds 2.5 --arms off,off-control,gpumon-python-10hz,seed-thread-10hz --out "$res" \
      >"$res/overhead-$loop.txt" 2>&1
    log "  $(grep -A3 '"gpumon-python-10hz"' "$res/overhead-$loop.json" | tr -d '\n ' | head -c 300)"
  done
elif [ "$part" = launch ]; then  # the launch-bound loop again, pinned, more and shorter blocks
  export XDG_RUNTIME_DIR=/tmp/xdg; mkdir -p "$XDG_RUNTIME_DIR"
  log "mon.step() cost"
  timeout 100 python3 bench/step_cost.py --device cuda --blocks 10 --out "$res/step-cost.json" >"$res/step-cost.txt" 2>&1
  log "  $(grep -A2 '"gpumon"' "$res/step-cost.json" | tail -1)"
  unset XDG_RUNTIME_DIR
  timeout 400 python3 bench/training_overhead.py --gpumon "$g" --loop launch --blocks 12 \
    --seconds 1.5 --cpus 2-5 --arms off,off-control,gpumon-python-10hz,seed-thread-10hz \
    --out "$res" >"$res/overhead-launch.txt" 2>&1
  log "  $(grep -A3 '"gpumon-python-10hz"' "$res/overhead-launch.json" | tr -d '\n ' | head -c 300)"
  timeout 150 python3 bench/training_overhead.py --gpumon "$g" --loop gemm --blocks 8 \
    --seconds 2.5 --arms off,off-control,gpumon-python-10hz,seed-thread-10hz --out "$res" \
    >"$res/overhead-gemm.txt" 2>&1
  log "  $(grep -A3 '"gpumon-python-10hz"' "$res/overhead-gemm.json" | tr -d '\n ' | head -c 300)"
elif [ "$part" = check ]; then  # the real CUDA paths through the C++ step clock
  rec example-plain 60 python3 examples/train_plain.py --device cuda --steps 300
  "$g" export "$res/example-plain.gpumon" --steps --format jsonl >"$res/example-plain-steps.jsonl" 2>&1
  log "  steps with gpu_step_s: $(grep -c '"gpu_step_s":[0-9]' "$res/example-plain-steps.jsonl"), with allocated_bytes: $(grep -c '"allocated_bytes":[0-9]' "$res/example-plain-steps.jsonl")"
  log "deliberate OOMs"
  mkdir -p "$res/oom"
  timeout 100 python3 tools/device/oom_h200.py --out "$res/oom" >"$res/oom.txt" 2>&1
  log "  oom_h200.py exit $?; $(tail -c 400 "$res/oom.txt" | tr '\n' ' ')"
elif [ "$part" = ab ]; then  # gpumon's calls on and off in alternating runs of steps
  timeout 150 python3 bench/inloop_ab.py --gpumon "$g" --loop launch --pairs 200 --steps 40 \
    --cpus 2-5 --out "$res/inloop-ab-launch.json" >"$res/inloop-ab-launch.txt" 2>&1
  log "  launch: $(grep -A3 slowdown_pct_median "$res/inloop-ab-launch.json" | tr -d '\n ')"
  timeout 150 python3 bench/inloop_ab.py --gpumon "$g" --loop gemm --pairs 120 --steps 20 \
    --out "$res/inloop-ab-gemm.json" >"$res/inloop-ab-gemm.txt" 2>&1
  log "  gemm: $(grep -A3 slowdown_pct_median "$res/inloop-ab-gemm.json" | tr -d '\n ')"
elif [ "$part" = ablaunch ]; then  # the launch loop's A/B alone, as many pairs as the time allows
  k=${AB_STEPS:-20}
  ab "launch-$k" "${AB_SECONDS:-100}" --steps "$k"
elif [ "$part" = abdiag ]; then  # where the launch loop's A/B slowdown comes from
  lscpu -e >"$res/lscpu.txt" 2>&1
  ab agent-any-10 ${AB_SECONDS:-90} --steps 10
  ab agent-same-cpus-10 ${AB_SECONDS:-90} --steps 10 --agent-cpus 2-5
  ab control-10 60 --steps 10 --arm control
  ab no-bounded-reads-10 70 --steps 10 --no-bounded-reads
  ab agent-any-40 ${AB_SECONDS:-90} --steps 40
elif [ "$part" = abfinal ]; then  # after the per-step calls moved into C: their cost, then the A/B
  export XDG_RUNTIME_DIR=/tmp/xdg; mkdir -p "$XDG_RUNTIME_DIR"
  timeout 100 python3 bench/step_cost.py --device cuda --blocks 10 --out "$res/step-cost.json" >"$res/step-cost.txt" 2>&1
  log "  step cost: $(grep -A1 '"gpumon"' "$res/step-cost.json" | tail -1)"
  ab launch-10 "${AB_SECONDS:-300}" --steps 10
elif [ "$part" = abnull ]; then  # the launch loop's A/B with a reader that discards the steps
  ab launch-null "${AB_SECONDS:-120}" --steps 10 --null-agent
elif [ "$part" = coldab ]; then  # the next measurements of the launch loop's cost (see python.md)
  timeout 60 python3 bench/cold_step_cost.py --gpumon "$g" --cpu 3 --agent-cpu 12 \
    --out "$res/cold-step-cost.json" >"$res/cold-step-cost.txt" 2>&1
  log "  cold: $(grep '"extra_cold' "$res/cold-step-cost.json" | tr -d '\n ')"
  inloop_launch
  ab launch-40 "${AB_SECONDS:-240}" --steps 40
elif [ "$part" = handover ]; then  # after the hand-over moved to C++ (PERFORMANCE.md)
  inloop_launch
  ab launch-40 "${AB_SECONDS:-380}" --steps 40
elif [ "$part" = inert ]; then  # is the main thread's extra CPU in the calls or in their work?
  { command -v perf && timeout 10 perf stat -e cycles,instructions true; } >"$res/perf.txt" 2>&1
  for arm in ${AB_ARMS:-inert gpumon}; do
    ab "launch-10-$arm" "${AB_SECONDS:-200}" --steps 10 $(ab_arm_args "$arm")
  done
elif [ "$part" = abpool ]; then  # runs to pool: AB_ROUNDS rounds of each of AB_ARMS in turn
  for i in 1 2 3; do  # the step clock's cold work, TSC against steady_clock, on CPU 2
    taskset -c 2 "$bdir/gpumon_bench_step_clock_cold" --reps 1000 >"$res/step-clock-cold-$i.json" 2>&1
    log "  step clock cold: $(tr -d '\n' <"$res/step-clock-cold-$i.json")"
  done
  n=0  # in every name: an arm may come twice in a round
  for round in $(seq "${AB_ROUNDS:-2}"); do
    for arm in ${AB_ARMS:-gpumon control}; do
      n=$((n + 1))
      ab "launch-10-$arm-r$round-$n" "${AB_SECONDS:-95}" --steps 10 $(ab_arm_args "$arm")
    done
  done
elif [ "$part" = abboth ]; then  # both reference loops: the launch loop in rounds, then gemm
  ab launch-10-gpumon-r1 "${AB_SECONDS:-120}" --steps 10
  ab launch-10-control-r1 100 --steps 10 --arm control
  ab launch-10-gpumon-r2 "${AB_SECONDS:-120}" --steps 10
  log "gemm loop"
  timeout 180 python3 bench/inloop_ab.py --gpumon "$g" --loop gemm --pairs 100000 --steps 10 \
    --max-seconds "${AB_SECONDS:-120}" --out "$res/ab-gemm-10-gpumon.json" >"$res/ab-gemm-10-gpumon.txt" 2>&1
  log "  gemm: $(grep -A1 -E '"slowdown_pct_(median|total)"' "$res/ab-gemm-10-gpumon.json" | tr -d '\n ')"
elif [ "$part" = ddp2 ]; then  # the DDP runs again, with every rank stopping at the same step
  for k in ddp-healthy imbalance; do
    rec "planted-$k" 80 python3 -m torch.distributed.run --standalone --nproc_per_node 2 tools/device/planted.py "$k" --seconds 40
  done
  log "mon.step() cost"
  export XDG_RUNTIME_DIR=/tmp/xdg; mkdir -p "$XDG_RUNTIME_DIR"
  timeout 100 python3 bench/step_cost.py --device cuda --blocks 10 --out "$res/step-cost.json" >"$res/step-cost.txt" 2>&1
  log "  $(grep -A1 '"gpumon"' "$res/step-cost.json" | tail -1)"
elif [ "$part" = ddp ]; then
  rec example-ddp2 150 python3 -m torch.distributed.run --standalone --nproc_per_node 2 examples/train_ddp.py --device cuda --steps 300
  for k in ddp-healthy imbalance; do
    rec "planted-$k" 90 python3 -m torch.distributed.run --standalone --nproc_per_node 2 tools/device/planted.py "$k" --seconds 25
  done
  rec planted-idle-gpu 60 python3 tools/device/planted.py healthy --seconds 25
  for k in leak near-oom fragmentation; do  # the second design of these (time-based growth)
    rec "planted-$k" 60 python3 tools/device/planted.py "$k" --seconds 25
  done
fi
log "done"
