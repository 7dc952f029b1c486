#!/usr/bin/env bash
# Installs what gpumon needs to build and test on Debian 12, from Debian's packages only.
# Usage: scripts/setup.sh [--build-only] [--with-npm]
#   --build-only  only what building gpumon needs (no test tools)
#   --with-npm    npm even with --build-only, for the web dashboard's chart library
#                 (deploy/Dockerfile's build stage)
# Runs apt-get only when a package is missing, so repeated runs are fast.
set -euo pipefail

build_pkgs=(build-essential cmake ninja-build pkg-config git
  libcli11-dev nlohmann-json3-dev libfmt-dev libncurses-dev libsqlite3-dev libzstd-dev
  libmicrohttpd-dev libgnutls28-dev libyaml-cpp-dev pybind11-dev python3-dev zlib1g-dev
  help2man file)
test_pkgs=(libgtest-dev libgmock-dev libbenchmark-dev tmux clang libfuzzer-14-dev python3
  prometheus python3-prometheus-client chromium wrk slowhttptest openssl
  python3-torch python3-pybind11 python3-pytest libtorch-dev python3-venv python3-pip
  python3-setuptools python3-yaml)

build_only=0 with_npm=0
for arg in "$@"; do
  case $arg in
    --build-only) build_only=1 ;;
    --with-npm) with_npm=1 ;;
    *) echo "usage: scripts/setup.sh [--build-only] [--with-npm]" >&2; exit 2 ;;
  esac
done

pkgs=("${build_pkgs[@]}")
[ $build_only -eq 1 ] || pkgs+=("${test_pkgs[@]}")
# npm fetches the web dashboard's chart library (web/package-lock.json); Debian's npm only
# where no npm is installed (a Node.js from elsewhere brings its own).
if [ $build_only -eq 0 ] || [ $with_npm -eq 1 ]; then
  command -v npm >/dev/null || pkgs+=(npm)
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
web_deps() {  # the web dashboard's chart library (npm ci, only when missing or the lock changed)
  "$(dirname "$0")/web-deps.sh"
}
if [ ${#missing[@]} -eq 0 ]; then
  web_deps
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null; then
  sudo=(sudo)
else
  echo "setup: need root to install: ${missing[*]} (run as root, or install sudo)" >&2
  exit 1
fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
web_deps
