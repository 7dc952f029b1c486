# shellcheck shell=bash
# Sourced by the tools/device/*_h200.sh scripts (not run): gpumon's build on the GPU machine.
#
#   gpumon_build DIR [--python] [CMAKE_FLAG...] -- TARGET...
#
# Configures the repository (the current directory) into DIR with CMake and Ninja, then builds
# TARGET... with -j 16. The flags every script shares: RelWithDebInfo, no tests, no exporter;
# --python adds GPUMON_PYTHON (the python3 on PATH, the pip torch's) and pybind11_DIR; other
# arguments before -- are passed to cmake as they are (e.g. -DGPUMON_BUILD_BENCH=ON).
# DEVDEPS: a folder with sqlite3/zstd headers and pkg-config files (.devdeps, carried: the
# machine has the runtime libraries but not libsqlite3-dev/libzstd-dev); used when set, a folder,
# and /usr/include/sqlite3.h is missing. Its libzstd.pc names /DEVDEPS_PLACEHOLDER, replaced here.
# Needs log() and $res: the outputs go to $res/cmake.txt and $res/build.txt. On failure: logs
# BUILD FAILED, prints both logs' tails and returns 1 (the caller exits).
gpumon_build() {
  local dir=$1
  shift
  local flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUMON_BUILD_TESTS=OFF
               -DGPUMON_WITH_EXPORTER=OFF)
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    if [ "$1" = --python ]; then
      flags+=(-DGPUMON_PYTHON="$(command -v python3)"
              -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir 2>/dev/null)")
    else
      flags+=("$1")
    fi
    shift
  done
  [ $# -gt 0 ] && shift  # the --
  if [ ! -f /usr/include/sqlite3.h ] && [ -n "${DEVDEPS:-}" ] && [ -d "$DEVDEPS" ]; then
    sed -i "s|/DEVDEPS_PLACEHOLDER|$DEVDEPS|" "$DEVDEPS/lib/pkgconfig/libzstd.pc"
    local l
    for l in libzstd.so.1 libsqlite3.so.0; do  # the runtime libraries are there, only -dev is not
      ln -sf "$(ldconfig -p | awk -v l=$l '$1 == l {print $NF; exit}')" "$DEVDEPS/lib/${l%.*}"
    done
    export PKG_CONFIG_PATH="$DEVDEPS/lib/pkgconfig"
    flags+=(-DSQLite3_INCLUDE_DIR="$DEVDEPS/include" -DSQLite3_LIBRARY="$DEVDEPS/lib/libsqlite3.so")
    log "using carried sqlite3/zstd headers"
  fi
  cmake -S "$PWD" -B "$dir" -G Ninja "${flags[@]}" >"$res/cmake.txt" 2>&1 &&
    cmake --build "$dir" -j 16 --target "$@" >"$res/build.txt" 2>&1 ||
    { log "BUILD FAILED"; tail -n 40 "$res/build.txt" "$res/cmake.txt"; return 1; }
}

# device_results DEFAULT_DIR: the results folder of a script ($OUT, else DEFAULT_DIR): sets out
# and res ($out/r), defines log() (to the screen and $res/log.txt) and packs $res into
# $out/results.tgz on exit (the machine returns at most 8 files).
device_results() {
  out=${OUT:-$1}
  mkdir -p "$out/r"
  res="$out/r"
  log() { echo "[$(date +%T)] $*" | tee -a "$res/log.txt"; }
  trap 'tar -czf "$out/results.tgz" -C "$out" r' EXIT
}

# redact: stdin to stdout with the board's UUID, serial and -q's GPU PDI replaced by the
# placeholders testdata/nvidia-smi/h200/README.md names, so what it writes can be committed.
redact() {
  [ -n "${redact_uuid+x}" ] || redact_uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1)
  [ -n "${redact_serial+x}" ] ||
    redact_serial=$(nvidia-smi --query-gpu=serial --format=csv,noheader | head -1)
  sed -e "s/$redact_uuid/GPU-5ca1ab1e-0000-4000-8000-000000000000/g" \
      -e "s/$redact_serial/1650000000000/g" \
      -e 's/^\(    GPU PDI  *: \).*/\10x5ca1ab1e00000000/'
}

# same LABEL FILE1 FILE2: "SAME LABEL", or "DIFFERENT LABEL" and the diff (gpumon's output
# against nvidia-smi's, byte for byte).
same() {
  if cmp -s "$2" "$3"; then echo "SAME $1"; else echo "DIFFERENT $1"; diff "$2" "$3"; fi
}
