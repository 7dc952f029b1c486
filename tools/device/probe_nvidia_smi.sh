#!/usr/bin/env bash
# Captures nvidia-smi's query-mode output on a real GPU machine, so gpumon's formatter can be
# checked byte for byte against it (testdata/nvidia-smi/). Writes into $1 (default $OUT).
set -u
out=${1:-${OUT:-/tmp/nvsmi-probe}}
mkdir -p "$out"
fields=(timestamp index name gpu_name uuid gpu_uuid serial pci.bus_id gpu_bus_id driver_version
  pstate fan.speed temperature.gpu temperature.memory utilization.gpu utilization.memory
  memory.total memory.used memory.free memory.reserved power.draw power.draw.instant
  power.draw.average power.limit enforced.power.limit clocks.sm clocks.current.sm clocks.mem
  clocks.current.memory clocks.gr clocks.max.sm clocks.max.memory clocks.max.gr
  clocks_event_reasons.active clocks_throttle_reasons.active
  clocks_event_reasons.sw_power_cap clocks_event_reasons.hw_thermal_slowdown
  ecc.errors.corrected.volatile.total ecc.errors.uncorrected.volatile.total
  ecc.mode.current persistence_mode count pci.device_id compute_mode)
{
  echo "## env"; uname -a; cat /etc/os-release 2>/dev/null | head -3; nvidia-smi --version
  echo "## tools"; for t in cmake ninja g++ gcc c++ python3 nvcc; do printf '%s: ' $t; command -v $t && $t --version 2>&1 | head -1; done
  echo "## headers"; ls -d /usr/include/nlohmann /usr/include/CLI /usr/include/fmt /usr/include/gtest /usr/include/benchmark 2>&1
  python3 -c "import pybind11, sys; print('pybind11', pybind11.__version__, pybind11.get_include())" 2>&1
  python3 -c "import pynvml; print('pynvml ok', pynvml.__file__)" 2>&1
  ldd --version | head -1; ldconfig -p | grep -i nvidia-ml
} >"$out/env.txt" 2>&1
nvidia-smi >"$out/nvidia-smi-default.txt" 2>&1
nvidia-smi -q >"$out/nvidia-smi-q.txt" 2>&1
nvidia-smi --help-query-gpu >"$out/help-query-gpu.txt" 2>&1
nvidia-smi --help-query-compute-apps >"$out/help-query-compute-apps.txt" 2>&1
nvidia-smi -h >"$out/nvidia-smi-help.txt" 2>&1
{
  for f in "${fields[@]}"; do
    for fmt in csv csv,noheader csv,nounits csv,noheader,nounits; do
      echo "### --query-gpu=$f --format=$fmt"
      nvidia-smi --query-gpu="$f" --format="$fmt" 2>&1; echo "rc=$?"
    done
  done
} >"$out/fields.txt"
all=$(IFS=,; echo "${fields[*]}")
{
  echo "### all csv"; nvidia-smi --query-gpu="$all" --format=csv 2>&1; echo "rc=$?"
  echo "### all nounits"; nvidia-smi --query-gpu="$all" --format=csv,nounits 2>&1; echo "rc=$?"
  echo "### -i 0"; nvidia-smi --query-gpu=index,name --format=csv -i 0 2>&1; echo "rc=$?"
  echo "### -i 0,0"; nvidia-smi --query-gpu=index,name --format=csv -i 0,0 2>&1; echo "rc=$?"
  uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1)
  bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1)
  echo "### -i uuid"; nvidia-smi --query-gpu=index --format=csv -i "$uuid" 2>&1; echo "rc=$?"
  echo "### -i bus"; nvidia-smi --query-gpu=index --format=csv -i "$bus" 2>&1; echo "rc=$?"
  echo "### -i 7"; nvidia-smi --query-gpu=index --format=csv -i 7 2>&1; echo "rc=$?"
  echo "### -i abc"; nvidia-smi --query-gpu=index --format=csv -i abc 2>&1; echo "rc=$?"
  echo "### unknown field"; nvidia-smi --query-gpu=index,bogus.field --format=csv 2>&1; echo "rc=$?"
  echo "### bad format"; nvidia-smi --query-gpu=index --format=xml 2>&1; echo "rc=$?"
  echo "### no format"; nvidia-smi --query-gpu=index 2>&1; echo "rc=$?"
  echo "### empty query"; nvidia-smi --query-gpu= --format=csv 2>&1; echo "rc=$?"
  echo "### loop-ms 200 for 1s"; timeout 1.1 nvidia-smi --query-gpu=timestamp,index,power.draw --format=csv,noheader -lms 200 2>&1; echo "rc=$?"
  echo "### loop 1 for 2.5s"; timeout 2.5 nvidia-smi --query-gpu=timestamp,index --format=csv -l 1 2>&1; echo "rc=$?"
  echo "### compute-apps idle"; nvidia-smi --query-compute-apps=pid,process_name,gpu_uuid,gpu_bus_id,used_memory,gpu_name,gpu_serial --format=csv 2>&1; echo "rc=$?"
} >"$out/cases.txt"
# A PyTorch process holding memory, for --query-compute-apps.
python3 "$(dirname "$0")/busy_gpu.py" 8 &
pid=$!
sleep 5
{
  echo "### compute-apps busy (pid $pid)"
  nvidia-smi --query-compute-apps=pid,process_name,gpu_uuid,gpu_bus_id,used_memory --format=csv 2>&1; echo "rc=$?"
  nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader,nounits 2>&1; echo "rc=$?"
  echo "### busy all"; nvidia-smi --query-gpu="$all" --format=csv 2>&1; echo "rc=$?"
  nvidia-smi 2>&1
} >"$out/busy.txt"
wait $pid
echo "probe done: $(ls "$out" | tr '\n' ' ')"
