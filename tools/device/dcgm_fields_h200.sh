#!/usr/bin/env bash
# The readings behind `gpumon serve --compat dcgm`'s new fields on the real H200, beside
# nvidia-smi's own words for them: memory (FB used/free/reserved), encoder and decoder
# utilization, PCIe replays, remapped rows, NVLink data counters (docs/exporter.md "--compat
# dcgm"). The machine has no libmicrohttpd, so serve is not built: `gpumon record` samples with
# the same sampler defaults and `gpumon export` prints what serve would render (the rendering
# itself is tested on CPU). Idle and beside a busy PyTorch process; about a minute after the
# build. Results: $OUT/results.tgz (r/export-{idle,busy}.csv, r/nvidia-smi-*.txt,
# r/compare.txt, r/log.txt; UUID and serial redacted). DEVDEPS: see build_env.sh (carry
# .devdeps).
set -uo pipefail
DEVDEPS=${DEVDEPS:-$PWD/.devdeps}
. tools/device/build_env.sh
device_results /tmp/gpumon-dcgm-fields
log "build"
gpumon_build /tmp/gpumon-build -- gpumon || exit 1
g=/tmp/gpumon-build/gpumon

# The board's UUID and serial are as identifying as a MAC address: never in what comes back.
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1)
serial=$(nvidia-smi --query-gpu=serial --format=csv,noheader | head -1)
redact() { sed -e "s/$uuid/GPU-REDACTED/g" -e "s/$serial/SERIAL-REDACTED/g"; }
metrics=memory_used_bytes,memory_free_bytes,memory_reserved_bytes,memory_total_bytes,\
utilization_encoder_pct,utilization_decoder_pct,pcie_replay_count,remapped_rows_correctable,\
remapped_rows_uncorrectable,remapped_rows_pending,remapped_rows_failure,nvlink_data_tx_kib,\
nvlink_data_rx_kib,energy_j

sample() {  # sample LABEL: 4 s recorded at 2 Hz, exported; nvidia-smi's view at the end
  rm -f "/tmp/$1.gpumon"
  timeout -s INT 4 "$g" record -o "/tmp/$1.gpumon" --interval 500 --no-diagnose \
    >"$res/record-$1.txt" 2>&1
  log "record ($1) exited $?"
  "$g" export "/tmp/$1.gpumon" --format csv --metrics "$metrics" >"$res/export-$1.csv" 2>&1
  log "export ($1) exited $?"
  nvidia-smi --query-gpu=memory.used,memory.free,memory.reserved,memory.total,\
utilization.encoder,utilization.decoder --format=csv,nounits >"$res/nvidia-smi-query-$1.txt" 2>&1
}

log "idle"
sample idle
nvidia-smi -q -d ROW_REMAPPER 2>&1 | redact >"$res/nvidia-smi-row-remapper.txt"
nvidia-smi -q 2>&1 | grep -B2 -A3 -i "replay" | redact >"$res/nvidia-smi-replays.txt"
nvidia-smi nvlink -s 2>&1 | redact >"$res/nvidia-smi-nvlink-status.txt"
nvidia-smi nvlink -gt d 2>&1 | redact >"$res/nvidia-smi-nvlink-throughput.txt"
python3 tools/device/busy_gpu.py 40 &
busy=$!
sleep 8
log "busy"
sample busy
kill "$busy" 2>/dev/null; wait "$busy" 2>/dev/null

{
  for l in idle busy; do
    echo "== gpumon export ($l): header, first and last rows =="
    head -2 "$res/export-$l.csv"; tail -1 "$res/export-$l.csv"
    echo "== nvidia-smi ($l) =="
    cat "$res/nvidia-smi-query-$l.txt"
  done
  echo "== nvidia-smi remapped rows, replays, NVLink =="
  grep -A8 -i "remapped rows" "$res/nvidia-smi-row-remapper.txt"
  cat "$res/nvidia-smi-replays.txt"
  head -5 "$res/nvidia-smi-nvlink-status.txt" "$res/nvidia-smi-nvlink-throughput.txt"
} | redact >"$res/compare.txt"
cat "$res/compare.txt"
log "done in ${SECONDS} s"
