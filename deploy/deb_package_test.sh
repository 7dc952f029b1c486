#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian package of BUILD_DIR (cmake/Packaging.cmake): built with cpack, checked with
# dpkg-deb (name, version, dependencies from the linked libraries), installed with dpkg into a
# scratch root (its own dpkg database: nothing on this machine changes), and run from there:
# --version, `query -L` on the fake NVML, the man page, the systemd unit's path, deploy/.
# usage: deb_package_test.sh BUILD_DIR FAKE_NVML   (exit 77: skipped without cpack or dpkg)
set -euo pipefail
build=$1 fake_nvml=$2
for tool in cpack dpkg dpkg-deb dpkg-shlibdeps file readelf ldd; do
  command -v "$tool" >/dev/null || { echo "SKIP: no $tool"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

(cd "$build" && cpack -G DEB -B "$tmp/out" >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log"; fail "cpack"; }
deb=$(ls "$tmp"/out/gpumon_*.deb)
info=$(dpkg-deb --field "$deb" Package Version Architecture Depends)
echo "$info"
grep -qx "Package: gpumon" <<<"$info" || fail "package name"
grep -q "^Version: [0-9]" <<<"$info" || fail "version"
grep -q "^Depends: .*libsqlite3" <<<"$info" || fail "Depends lacks the libraries gpumon links"

# dpkg -i into a scratch root with its own (empty) database; the dependencies are this machine's.
root=$tmp/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
: >"$root/var/lib/dpkg/status"
dpkg --root="$root" --force-depends --force-not-root --force-script-chrootless \
  --log=/dev/null -i "$deb" >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg -i"; }
dpkg --root="$root" -s gpumon | grep -q "^Status: install ok installed" || fail "not installed"

g=$root/usr/bin/gpumon
# The Debian package owning a library file (usrmerge: as /lib or /usr/lib).
owner() {
  local p c out
  for p in "$1" "$(realpath "$1")"; do
    for c in "$p" "${p#/usr}" "/usr$p"; do
      out=$(dpkg-query -S "$c" 2>/dev/null) && { echo "${out%%:*}"; return 0; }
    done
  done
  return 1
}
# Every library gpumon links directly is in Depends: the container image installs this package
# alone and gets them from apt through it (deploy/Dockerfile).
depends=$(dpkg-deb --field "$deb" Depends | tr ',|' '\n\n' | sed 's/^ *//; s/[ :].*//')
for soname in $(readelf -d "$g" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
  case $soname in lib*san.so* | ld-linux*) continue ;; esac  # a sanitizer's runtime; libc6's
  path=$(ldd "$g" | awk -v s="$soname" '$1 == s && $2 == "=>" { print $3 }')
  [ -n "$path" ] || fail "ldd does not find $soname"
  pkg=$(owner "$path") || fail "$soname ($path) belongs to no Debian package"
  grep -qxF "$pkg" <<<"$depends" || fail "Depends lacks $pkg ($soname)"
done
echo "ok: Depends names the package of every library gpumon links"
version=$("$g" --version)
case $version in "gpumon "*" build)") echo "ok: $version" ;; *) fail "--version said '$version'" ;; esac
GPUMON_NVML_LIBRARY=$fake_nvml GPUMON_FAKE_SCENARIO=demo "$g" query -L | grep -q "^GPU 0: " ||
  fail "gpumon query -L on the fake NVML"
man=$(ls "$root"/usr/share/man/man1/gpumon.1* 2>/dev/null) ||
  fail "no man page (help2man was missing when BUILD_DIR was configured)"
{ [[ $man == *.gz ]] && zcat "$man" || cat "$man"; } | grep -q '^\.TH GPUMON' || fail "man page"
grep -q "^ExecStart=/usr/bin/gpumon serve" "$root/usr/lib/systemd/system/gpumon.service" ||
  fail "the unit does not start /usr/bin/gpumon"
for f in prometheus.yml alerts/gpumon-alerts.yml grafana/gpumon-dashboard.json \
  grafana/gpumon-job.json; do
  [ -f "$root/usr/share/gpumon/deploy/$f" ] || fail "no /usr/share/gpumon/deploy/$f"
done
echo "ok: $(basename "$deb") installs gpumon, its man page, unit and deploy files"
