#!/usr/bin/env bash
# Sets up and runs every test, as CI does: the dev build, the ASan+UBSan build, and the
# fuzz targets over their committed corpora. No GPU needed: tests use gpumon's fake NVML.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs=$(nproc)

echo "== dev build and tests"
scripts/build.sh dev
ctest --preset dev -j "$jobs"

echo "== ASan+UBSan build and tests"
scripts/build.sh asan
ctest --preset asan -j "$jobs"

echo "== ThreadSanitizer: the threaded parts (sampler, ring buffer, exporter state, HTTP server, agent,"
echo "   live diagnoser)"
cmake --preset tsan >/dev/null
tsan_targets=(gpumon_sampler_test gpumon_fake_nvml)
# (grep over a saved list: `ninja ... | grep -q` dies of SIGPIPE under pipefail.)
all_targets=$(ninja -C build-tsan -t targets all)
for t in gpumon_exporter_test gpumon_http_test gpumon_agent_test \
    gpumon_live_diagnoser_test; do  # absent without their libs
  grep -q "^$t:" <<<"$all_targets" && tsan_targets+=("$t")
done
cmake --build --preset tsan -j "$jobs" --target "${tsan_targets[@]}"
ctest --preset tsan -j "$jobs" \
  -R 'Sampler|RingBuffer|ExporterState|ExporterFakeNvml|^http\.|^agent\.|^diagnose\.live\.'

echo "== fuzz targets over their corpora (regression)"
scripts/build.sh fuzz
shopt -s nullglob
for f in build-fuzz/*_fuzz; do
  name=$(basename "$f" _fuzz)
  args=(-max_total_time="${GPUMON_FUZZ_SECONDS:-20}" -rss_limit_mb=1024)
  [ -f "testdata/fuzz/$name.dict" ] && args+=(-dict="testdata/fuzz/$name.dict")
  corpora=("build-fuzz/corpus-$name")
  [ -d "testdata/fuzz/$name" ] && corpora+=("testdata/fuzz/$name")
  mkdir -p "build-fuzz/corpus-$name"
  if ! "$f" "${args[@]}" "${corpora[@]}" >"build-fuzz/$name.log" 2>&1; then
    echo "fuzz target $name failed:"; tail -40 "build-fuzz/$name.log"; exit 1
  fi
  echo "fuzz $name: $(grep -o 'Done [0-9]* runs' "build-fuzz/$name.log"), no crash"
done
echo "== all tests passed"
