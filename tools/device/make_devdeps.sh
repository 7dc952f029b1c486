#!/usr/bin/env bash
# Makes .devdeps (ignored, carried to the GPU machine: run(carry=[".devdeps"])): the sqlite3
# and zstd headers and zstd's pkg-config file from this machine's libsqlite3-dev and
# libzstd-dev. The GPU machine has their runtime libraries but not the -dev packages;
# build_env.sh links against its own runtime libraries with these headers.
set -euo pipefail
cd "$(dirname "$0")/../.."
d=.devdeps
rm -rf "$d" && mkdir -p "$d/include" "$d/lib/pkgconfig"
cp /usr/include/sqlite3.h /usr/include/sqlite3ext.h /usr/include/zstd.h \
   /usr/include/zstd_errors.h /usr/include/zdict.h "$d/include/"
sed -e 's|^prefix=.*|prefix=/DEVDEPS_PLACEHOLDER|' -e 's|^libdir=.*|libdir=${prefix}/lib|' \
  /usr/lib/x86_64-linux-gnu/pkgconfig/libzstd.pc >"$d/lib/pkgconfig/libzstd.pc"
grep -qx "/$d/" .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo "/$d/" >>.git/info/exclude; }
echo "made $d (carry it: run(carry=[\"$d\"]))"
