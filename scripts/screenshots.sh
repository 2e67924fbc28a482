#!/usr/bin/env bash
# `npm run screenshots`: retakes the Temporal UI screenshots docs/operations.md shows
# (docs/images/temporal-ui-*.png) by running the browser test with AGENTRY_SCREENSHOTS_DIR pointing
# there; a plain test run writes them to a temporary directory and leaves the tree as it was.
# Brings up what the test needs first, as `npm test` does. Commit the images when the UI changed.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/ensure-deps.sh
bash scripts/ensure-postgres.sh
bash scripts/ensure-redis.sh
bash scripts/ensure-temporal.sh >/dev/null
bash scripts/ensure-chromium.sh >/dev/null
npm run --silent build >/dev/null
AGENTRY_SCREENSHOTS_DIR="$PWD/docs/images" npx jest --selectProjects integration --runInBand \
  test/e2e/temporal-ui.test.ts "$@"
echo "[screenshots] docs/images/temporal-ui-*.png retaken" >&2
