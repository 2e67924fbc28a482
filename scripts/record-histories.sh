#!/usr/bin/env bash
# `npm run record-histories`: re-records the workflow histories that the replay test
# (test/integration/replay.test.ts) replays: brings up PostgreSQL and Redis, then runs
# scripts/record-histories.ts, which starts its own Temporal dev server (as the integration tests
# do, on TEMPORAL_ADDRESS, default 127.0.0.1:7233) and rewrites test/fixtures/histories/.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/ensure-deps.sh
bash scripts/ensure-postgres.sh >&2
bash scripts/ensure-redis.sh >&2
exec node -r ./scripts/ts-register.js scripts/record-histories.ts "$@"
