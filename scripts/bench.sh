#!/usr/bin/env bash
# `npm run bench -- [name]` (DESIGN §6): brings up PostgreSQL and Redis, builds, starts (or
# reuses) a headless Temporal dev server on a spare port, runs dist/bench/<name>.js and stops the
# server if it started it. Names are the files bench/<name>.ts with a main: `retrieval` (default),
# `execution`, `load` (API and worker as separate processes; flags after the name).
# Environment: BENCH_TEMPORAL_PORT (default: the first free port from 7299; a server already on a
# port given here is reused), TEMPORAL_ADDRESS (use that server instead),
# DATABASE_URL / REDIS_URL (the services), BENCH_SKIP_BUILD=1, plus each benchmark's BENCH_* and
# the product's AGENTRY_* settings (see bench/README.md). A server this script starts serves its
# Prometheus metrics on a free port from 9299 (BENCH_TEMPORAL_METRICS_URL, read by `streams`).
set -euo pipefail
cd "$(dirname "$0")/.."

NAME="${1:-retrieval}"
shift || true
if [[ ! "$NAME" =~ ^[a-z][a-z0-9-]*$ || ! -f "bench/$NAME.ts" ]]; then
  available=$(find bench -maxdepth 1 -name '*.ts' -printf '%f\n' |
    sed 's/\.ts$//' | sort | tr '\n' ' ')
  echo "bench: unknown benchmark '$NAME' (available: ${available% })" >&2
  exit 2
fi

bash scripts/ensure-deps.sh
bash scripts/ensure-postgres.sh >&2
bash scripts/ensure-redis.sh >&2

if [[ "${BENCH_SKIP_BUILD:-0}" != 1 ]]; then
  echo "[bench] build" >&2
  npm run --silent build >/dev/null
fi
[[ -f "dist/bench/$NAME.js" ]] || { echo "bench: dist/bench/$NAME.js missing after the build" >&2; exit 1; }

STATE=bench/.state
TEMPORAL_PID=""
stop_temporal() {
  if [[ "$TEMPORAL_PID" =~ ^[0-9]+$ ]]; then
    kill "$TEMPORAL_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$TEMPORAL_PID" 2>/dev/null || break; sleep 0.1; done
  fi
}
trap stop_temporal EXIT
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
if [[ -z "${TEMPORAL_ADDRESS:-}" ]]; then
  if [[ -n "${BENCH_TEMPORAL_PORT:-}" ]]; then
    PORT="$BENCH_TEMPORAL_PORT"   # a server already there is reused
  else
    # A server of our own on the first free port from 7299: one that another run started would
    # stop when that run ends, under this one's feet.
    PORT=7299
    while port_taken "$PORT"; do PORT=$((PORT + 1)); done
  fi
  echo "[bench] Temporal dev server on 127.0.0.1:$PORT" >&2
  mkdir -p "$STATE/temporal-$PORT"
  METRICS_PORT=9299
  while port_taken "$METRICS_PORT"; do METRICS_PORT=$((METRICS_PORT + 1)); done
  TEMPORAL_PID=$(bash scripts/temporal-dev-server.sh "$PORT" "$STATE/temporal-$PORT" --headless \
    --metrics-port "$METRICS_PORT")
  if [[ "$TEMPORAL_PID" == existing ]]; then
    echo "[bench] reusing the server already on :$PORT (its metrics, if any, are not read)" >&2
  else
    export BENCH_TEMPORAL_METRICS_URL="http://127.0.0.1:$METRICS_PORT/metrics"
  fi
  export TEMPORAL_ADDRESS="127.0.0.1:$PORT"
fi

echo "[bench] $NAME" >&2
node "dist/bench/$NAME.js" "$@"
