#!/usr/bin/env bash
# `npm test`: brings up what the tests need (DESIGN §4), then type-check, lint, the Helm chart's
# checks (scripts/check-chart.sh: its tools are built once from the Go module proxy, then offline),
# build and jest (unit in parallel, integration and e2e serially against the real services, then
# the fault-injection suite test/reliability/).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/ensure-deps.sh
bash scripts/ensure-postgres.sh
bash scripts/ensure-redis.sh
bash scripts/ensure-temporal.sh >/dev/null
bash scripts/ensure-chromium.sh >/dev/null
bash scripts/ensure-chart-tools.sh >/dev/null

echo "== typecheck" >&2
npx tsc -p tsconfig.json --noEmit
echo "== lint" >&2
npx eslint .
npx prettier --check . >/dev/null || { npx prettier --check .; exit 1; }
echo "== chart" >&2
bash scripts/check-chart.sh
echo "== build" >&2
npm run --silent build >/dev/null
echo "== jest" >&2
npx jest --selectProjects unit --maxWorkers=2 "$@"
npx jest --selectProjects integration --runInBand "$@"
npx jest --selectProjects reliability --runInBand "$@"
