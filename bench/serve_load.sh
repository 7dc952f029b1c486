#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Load test of `gpumon serve`'s /metrics with wrk: gpumon serve on the fake NVML's
# `demo` scenario (8 H200s), then wrk with 64 connections on 2 threads for 20 s with --latency.
# Prints wrk's report and one summary line: req/s, p50, p99, non-2xx answers, the serve
# process's RSS before and after and its CPU time during the load. Target: p99 at
# most 5 ms on the 2-core development machine.
#
#   bench/serve_load.sh [--gpumon build/gpumon] [--fake-nvml build/fake-nvml/libnvidia-ml.so.1]
#                       [--duration 20] [--connections 64] [--threads 2] [--runs 1]
#                       [--path /metrics] [--interval 1000] [-- EXTRA SERVE OPTIONS]
# Exit 0 when every run met the target, 1 when one did not, 2 on a setup problem.
set -euo pipefail

gpumon=build/gpumon
fake=
duration=20
connections=64
threads=2
runs=1
path=/metrics
interval=1000
target_p99_ms=5
extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --gpumon) gpumon=$2; shift 2 ;;
    --fake-nvml) fake=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --path) path=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "serve_load.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -n "$fake" ] || fake=$(dirname "$gpumon")/fake-nvml/libnvidia-ml.so.1
command -v wrk >/dev/null || { echo "serve_load.sh: wrk not found (apt-get install wrk)" >&2; exit 2; }
[ -x "$gpumon" ] || { echo "serve_load.sh: no gpumon at $gpumon" >&2; exit 2; }
[ -f "$fake" ] || { echo "serve_load.sh: no fake NVML at $fake" >&2; exit 2; }

work=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; wait "$pid" || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

GPUMON_NVML_LIBRARY=$fake GPUMON_FAKE_SCENARIO=demo \
  "$gpumon" serve --listen 127.0.0.1:0 --interval "$interval" "${extra[@]}" 2>"$work/serve.err" &
pid=$!
port=
for _ in $(seq 100); do
  port=$(sed -n 's|.*listening on https\?://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$work/serve.err")
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$port" ] || { echo "serve_load.sh: gpumon serve did not start:" >&2; cat "$work/serve.err" >&2; exit 2; }
url="http://127.0.0.1:$port$path"
sleep 3  # a few ticks, so the body has every series

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$pid/status"; }
hwm_kb() { awk '/^VmHWM:/ {print $2}' "/proc/$pid/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
# wrk prints latencies as 1.23ms, 456.78us or 1.02s: to milliseconds.
to_ms() {
  awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n += 0;
                         else if (v ~ /s$/) n *= 1000; printf "%.3f", n }'
}

body_bytes=$(curl -s "$url" | wc -c)
echo "gpumon serve pid $pid on $url (body $body_bytes bytes, 8 fake GPUs, interval $interval ms)"
echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1); load $(cut -d' ' -f1-3 /proc/loadavg)"
rss_start=$(rss_kb)
status=0
for run in $(seq "$runs"); do
  rss_before=$(rss_kb)
  cpu_before=$(cpu_ticks)
  wrk -t"$threads" -c"$connections" -d"${duration}s" --latency "$url" | tee "$work/wrk.txt"
  cpu_after=$(cpu_ticks)
  rss_after=$(rss_kb)
  p50=$(to_ms "$(awk '$1 == "50%" {print $2}' "$work/wrk.txt")")
  p99=$(to_ms "$(awk '$1 == "99%" {print $2}' "$work/wrk.txt")")
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$work/wrk.txt")
  non2xx=$(awk '/Non-2xx or 3xx responses:/ {print $NF}' "$work/wrk.txt")
  errors=$(awk '/Socket errors:/ {print $0}' "$work/wrk.txt")
  cpu_s=$(awk -v a="$cpu_before" -v b="$cpu_after" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { printf "%.1f", (b - a) / hz }')
  verdict=ok
  awk -v p="$p99" -v t="$target_p99_ms" 'BEGIN { exit !(p <= t) }' || { verdict="OVER TARGET"; status=1; }
  [ -z "$non2xx" ] || { verdict="$verdict, $non2xx non-2xx"; status=1; }
  echo "run $run: $rps req/s, p50 $p50 ms, p99 $p99 ms (target <= $target_p99_ms ms: $verdict);" \
       "serve RSS $rss_before -> $rss_after KiB (peak $(hwm_kb) KiB), serve CPU $cpu_s s" \
       "in ${duration} s${errors:+; $errors}"
done
rss_end=$(rss_kb)
curl -sf "$url" >/dev/null || { echo "serve_load.sh: /metrics does not answer after the load" >&2; status=1; }
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
pid=
[ "$rc" = 0 ] || { echo "serve_load.sh: gpumon serve exited $rc" >&2; status=1; }
echo "serve RSS: $rss_start KiB before the load, $rss_end KiB after; exit $rc on SIGTERM"
exit "$status"
