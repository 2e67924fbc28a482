#!/usr/bin/env bash
# Installs the npm dependencies from the lock file when node_modules is missing or older than it.
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=node_modules/.package-lock.json
if [[ ! -f "$stamp" || package-lock.json -nt "$stamp" ]]; then
  echo "[deps] npm ci" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
fi
