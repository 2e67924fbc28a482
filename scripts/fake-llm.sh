#!/usr/bin/env bash
# Starts the fake model server (scripts/fake-llm.ts) for the README quick start: compiles the project
# to dist/ when the compiled script is missing or older than its sources (after installing the
# dependencies the build needs), then runs it with node. package.json runs it with `exec` and it
# execs node, so the SIGINT/SIGTERM that npm forwards to its child reach the server itself.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/ensure-deps.sh

OUT=dist/scripts/fake-llm.js
SOURCES=(scripts/fake-llm.ts test/fakes/*.ts)

stale() {
  [[ -f "$OUT" ]] || return 0
  local src
  for src in "${SOURCES[@]}"; do
    [[ "$src" -nt "$OUT" ]] && return 0
  done
  return 1
}

if stale; then
  echo "Building dist/ (npx tsc -p tsconfig.build.json)..." >&2
  if ! npx tsc -p tsconfig.build.json; then
    # tsc still emits JavaScript on type errors; carry on only if the fake server itself was emitted.
    if stale; then
      echo "Build failed and $OUT was not produced." >&2
      exit 1
    fi
    echo "Warning: tsc reported errors (see above); $OUT was emitted, starting it anyway." >&2
  fi
fi

exec node "$OUT"
