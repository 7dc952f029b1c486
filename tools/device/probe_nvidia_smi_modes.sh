#!/usr/bin/env bash
# Captures nvidia-smi's other modes on a real GPU machine, for the parity work on `gpumon
# query -L/-q`, `dmon` and `pmon` and the query fields scripts use (testdata/nvidia-smi/h200/
# modes/): -L; -q whole and with each -d filter; dmon with its default and each -s selection;
# pmon idle and beside a PyTorch process; the extra --query-gpu fields, one by one and together.
# The board's UUID and serial are replaced (as in testdata/nvidia-smi/h200/README.md) before
# anything is written, so the files can be committed as they are. Writes into $1 (default
# $OUT/smi-modes). About 40 s.
set -u
out=${1:-${OUT:-/tmp}/smi-modes}
mkdir -p "$out"
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1)
serial=$(nvidia-smi --query-gpu=serial --format=csv,noheader | head -1)
fake_uuid=GPU-5ca1ab1e-0000-4000-8000-000000000000
fake_serial=1650000000000
# Only plain identifiers are replaced: "[N/A]" as a sed pattern would eat every N, / and A.
redact=(-e 's/^$//')
[[ $uuid =~ ^GPU-[0-9a-f-]+$ ]] &&
  redact+=(-e "s/$uuid/$fake_uuid/g" -e "s/${uuid#GPU-}/${fake_uuid#GPU-}/g")
[[ $serial =~ ^[0-9A-Za-z]+$ ]] && redact+=(-e "s/$serial/$fake_serial/g")
# -q's "GPU PDI" (the chip's platform data identifier) is as unique as the serial.
redact+=(-e 's/\(GPU PDI *: \)0x[0-9a-fA-F]*/\10x5ca1ab1e00000000/')
# run NAME ARGS...: nvidia-smi ARGS into NAME.txt with its exit status last, identifiers replaced.
run() {
  local name=$1; shift
  { nvidia-smi "$@" 2>&1; echo "rc=$?"; } | sed "${redact[@]}" >"$out/$name.txt"
}
run list -L
run q -q
for d in MEMORY UTILIZATION TEMPERATURE POWER CLOCK ECC PERFORMANCE PIDS; do
  run "q-d-$d" -q -d "$d"
done
run q-d-MEMORY,UTILIZATION -q -d MEMORY,UTILIZATION
run q-i0-d-POWER -q -i 0 -d POWER
run dmon-help dmon -h
run pmon-help pmon -h
run dmon dmon -c 3
for s in p u c v m e t; do run "dmon-s$s" dmon -s "$s" -c 2; done
run dmon-spucvmet dmon -s pucvmet -c 2
run dmon-o-DT dmon -c 2 -o DT
run pmon-idle pmon -c 2
extra=(pcie.link.gen.current pcie.link.gen.max pcie.link.gen.gpucurrent pcie.link.gen.gpumax
  pcie.link.width.current pcie.link.width.max compute_mode mig.mode.current mig.mode.pending
  vbios_version power.draw.average utilization.encoder utilization.decoder persistence_mode
  display_mode display_active fan.speed inforom.img accounting.mode)
for f in "${extra[@]}"; do
  run "field-$f" --query-gpu="$f" --format=csv
  run "field-$f-nounits" --query-gpu="$f" --format=csv,noheader,nounits
done
run fields-extra --query-gpu="$(IFS=,; echo "${extra[*]}")" --format=csv
# pmon and dmon beside a PyTorch process that holds memory and keeps the SMs busy.
python3 "$(dirname "$0")/busy_gpu.py" 12 &
pid=$!
sleep 5
run pmon-busy pmon -c 3
run pmon-busy-sum pmon -s um -c 2
run dmon-busy dmon -c 2
run list-busy -L
run q-d-PIDS-busy -q -d PIDS
wait $pid
echo "smi modes: $(ls "$out" | wc -l) files in $out"
