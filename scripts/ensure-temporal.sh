#!/usr/bin/env bash
# Makes the Temporal CLI 1.5.1 (dev server + Web UI) available and prints its path on stdout.
# Order: `temporal` on PATH (if 1.5.x), a cached binary, a `go install` build into a cache dir
# outside the repo. Cold build ≈ 6 min on 2 cores, warm ≈ 15 s (docs/decisions.md).
set -euo pipefail

VERSION=1.5.1
CACHE_BIN="${AGENTRY_CACHE_DIR:-$HOME/.cache/agentry}/bin"
CACHED="$CACHE_BIN/temporal"

say() { echo "[temporal] $*" >&2; }

is_wanted() { "$1" --version 2>/dev/null | grep -q "temporal version 1\.5\."; }

if [[ -n "${TEMPORAL_CLI_PATH:-}" ]] && is_wanted "$TEMPORAL_CLI_PATH"; then
  echo "$TEMPORAL_CLI_PATH"; exit 0
fi
if command -v temporal >/dev/null 2>&1 && is_wanted "$(command -v temporal)"; then
  command -v temporal; exit 0
fi
if [[ -x "$CACHED" ]] && is_wanted "$CACHED"; then
  echo "$CACHED"; exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "Temporal CLI $VERSION is missing and Go is not installed: install Go ≥ 1.25 or put 'temporal' $VERSION on PATH (or set TEMPORAL_ADDRESS to an existing server)." >&2
  exit 1
fi

mkdir -p "$CACHE_BIN"
say "building Temporal CLI $VERSION with go install (first time: several minutes)..."
start=$(date +%s)
if ! GOBIN="$CACHE_BIN" CGO_ENABLED=0 GOFLAGS=-mod=mod go install \
  -ldflags "-X github.com/temporalio/cli/temporalcli.Version=$VERSION" \
  "github.com/temporalio/cli/cmd/temporal@v$VERSION" >&2; then
  echo "Could not build the Temporal CLI with 'go install github.com/temporalio/cli/cmd/temporal@v$VERSION': check that the Go module proxy is reachable (go env GOPROXY)." >&2
  exit 1
fi
say "built in $(($(date +%s) - start)) s: $CACHED"
echo "$CACHED"
