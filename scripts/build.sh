#!/usr/bin/env bash
# Configures and builds one CMake preset (default: dev, into build/).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-dev}
scripts/web-deps.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
