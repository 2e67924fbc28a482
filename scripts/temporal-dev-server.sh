#!/usr/bin/env bash
# Starts a Temporal dev server in the background with Agentry's search attributes (SPEC DX-5)
# and latency settings, and waits for it to be healthy. Every dev server of the project starts
# here: `npm start` (embedded.ts), `npm test`, the reliability suite and the benchmarks.
# Idempotent: if one already answers on the port, it is reused.
# Usage: temporal-dev-server.sh <port> <state-dir> [--ui-port N] [--headless] [extra start-dev args]
# Prints the PID (or "existing") on stdout.
set -euo pipefail

PORT="$1"; STATE="$2"; shift 2
BIN=$(bash "$(dirname "$0")/ensure-temporal.sh")
mkdir -p "$STATE"

if "$BIN" operator cluster health --address "127.0.0.1:$PORT" >/dev/null 2>&1; then
  echo existing; exit 0
fi

# Latency settings (docs/operations.md "Temporal server settings" says what each does and costs;
# ../shared/notes/temporal-latency.md has the measurements):
# - the transfer queue moves each new workflow/activity task to matching; at the default 20 polls
#   a second every hand-off waits ≈ 35 ms for the next poll;
# - eager activities: the worker completing a workflow task gets the next activity task inline;
# - one task-queue partition: a dev server has one process, so partitions only make a poll miss.
TUNING=(
  --dynamic-config-value history.transferProcessorMaxPollRPS=10000
  --dynamic-config-value system.enableActivityEagerExecution=true
  --dynamic-config-value matching.numTaskqueueReadPartitions=1
  --dynamic-config-value matching.numTaskqueueWritePartitions=1
)
# A SQLite file (restarts keep workflows) in WAL mode without a sync per commit matches the
# in-memory server's latency; the default rollback journal doubles it.
for arg in "$@"; do
  if [[ "$arg" == --db-filename ]]; then
    TUNING+=(--sqlite-pragma journal_mode=WAL --sqlite-pragma synchronous=NORMAL)
  fi
done

"$BIN" server start-dev --ip 127.0.0.1 --port "$PORT" \
  --log-level error \
  --dynamic-config-value frontend.enableServerVersionCheck=false \
  "${TUNING[@]}" \
  --search-attribute AgentId=Keyword --search-attribute PipelineId=Keyword \
  --search-attribute LlmId=Keyword --search-attribute ApiKeyId=Keyword \
  --search-attribute ChainId=Keyword \
  "$@" >"$STATE/temporal.log" 2>&1 &
PID=$!
for _ in $(seq 1 150); do
  if "$BIN" operator cluster health --address "127.0.0.1:$PORT" >/dev/null 2>&1 \
    && "$BIN" operator search-attribute list --address "127.0.0.1:$PORT" 2>/dev/null | grep -q ChainId; then
    echo "$PID"; exit 0
  fi
  if ! kill -0 "$PID" 2>/dev/null; then
    echo "Temporal dev server exited during start-up; see $STATE/temporal.log:" >&2
    tail -5 "$STATE/temporal.log" >&2
    exit 1
  fi
  sleep 0.2
done
echo "Temporal dev server did not become healthy on 127.0.0.1:$PORT within 30 s; see $STATE/temporal.log" >&2
kill "$PID" 2>/dev/null || true
exit 1
