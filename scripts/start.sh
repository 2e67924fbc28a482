#!/usr/bin/env bash
# `npm start`: the embedded quick start. Installs dependencies and builds when needed, makes the
# Temporal CLI available (unless TEMPORAL_ADDRESS is set), then runs API + worker in one process.
# package.json runs it with `exec`, and it execs node: npm forwards SIGINT/SIGTERM to its child,
# which is then embedded.js itself (with `sh -c` and bash in between, nobody passed them on).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/ensure-deps.sh
newest_source=$(find api activities db domain infra workflows scripts test/fakes ./*.ts -name '*.ts' -newer dist/embedded.js 2>/dev/null | head -1 || true)
if [[ ! -f dist/embedded.js || -n "$newest_source" ]]; then
  echo "[start] building..." >&2
  npm run --silent build >/tmp/agentry-build.log 2>&1 || { cat /tmp/agentry-build.log >&2; echo "[start] the build failed (above)" >&2; exit 1; }
fi
# The CLI now (a first run builds it, with its progress on screen); embedded.ts starts the dev
# server through scripts/temporal-dev-server.sh.
if [[ -z "${TEMPORAL_ADDRESS:-}" ]]; then
  bash scripts/ensure-temporal.sh >/dev/null
fi
export AGENTRY_WORKFLOW_BUNDLE="${AGENTRY_WORKFLOW_BUNDLE:-$PWD/dist/workflow-bundle.js}"
exec node dist/embedded.js
