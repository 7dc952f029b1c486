#!/usr/bin/env bash
# Installs the web dashboard's npm packages (uPlot, pinned in web/package-lock.json) into
# web/node_modules with `npm ci`, only when they are missing or the lock file changed.
# Without npm, or offline, it says so and exits 0: the build then embeds a page that says the
# dashboard was built without its chart library.
set -euo pipefail
cd "$(dirname "$0")/.."
lock=web/package-lock.json
stamp=web/node_modules/.gpumon-lock.sha256
[ -f "$lock" ] || exit 0
want=$(sha256sum "$lock" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f web/node_modules/uplot/dist/uPlot.iife.min.js ]; then
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "web-deps: npm not found: the web dashboard is built without its chart library" \
       "(install Node.js 18+ with npm, then run: npm ci --prefix web)" >&2
  exit 0
fi
if npm ci --prefix web --no-audit --no-fund --loglevel=error --fetch-retries=1 --fetch-timeout=20000 >/dev/null; then
  echo "$want" >"$stamp"
else
  echo "web-deps: npm ci --prefix web failed (offline?): the web dashboard is built without its chart library" >&2
fi
