#!/usr/bin/env bash
# Makes the Temporal CLI 1.5.1 (dev server + Web UI) available and prints its path on stdout
# (nothing else goes to stdout; progress and errors go to stderr).
# Order: TEMPORAL_CLI_PATH, `temporal` on PATH (if 1.5.x), the cached binary, the official release
# archive for this platform (sha256-checked against the release's checksums.txt, installed into
# the cache), and only when that fails a `go install` build into the same cache. Download ≈ seconds,
# cold build ≈ 6 min on 2 cores (docs/decisions.md, docs/operations-services.md).
# TEMPORAL_CLI_DOWNLOAD_URL is the release base URL (empty: never download).
set -euo pipefail

VERSION=1.5.1
CACHE_BIN="${AGENTRY_CACHE_DIR:-$HOME/.cache/agentry}/bin"
CACHED="$CACHE_BIN/temporal"
BASE_URL="${TEMPORAL_CLI_DOWNLOAD_URL-https://github.com/temporalio/cli/releases/download/v$VERSION}"
GO_PACKAGE="github.com/temporalio/cli/cmd/temporal@v$VERSION"

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

# The release asset for this machine, as the CLI's .goreleaser.yml names it
# (temporal_cli_<version>_<os>_<arch>.tar.gz; linux and darwin, amd64 and arm64); empty if none.
release_asset() {
  local os arch
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *) return 0 ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=amd64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) return 0 ;;
  esac
  echo "temporal_cli_${VERSION}_${os}_${arch}.tar.gz"
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  else
    shasum -a 256 "$1" | cut -d' ' -f1
  fi
}

# fetch <url> <file>: fails fast when the host is unreachable, aborts a stalled transfer; the
# reason (curl's own one-line error) is left in $WORK/curl.err.
fetch() {
  curl --fail --silent --show-error --location --connect-timeout 5 --max-time 900 \
    --speed-limit 1024 --speed-time 30 --output "$2" "$1" 2>"$WORK/curl.err"
}

# Downloads, verifies and installs the release into $CACHED. On failure sets WHY and returns 1.
WHY=""
WORK=""
download_release() {
  local asset url expected actual
  asset=$(release_asset)
  if [[ -z "$BASE_URL" ]]; then WHY="download disabled (TEMPORAL_CLI_DOWNLOAD_URL is empty)"; return 1; fi
  if [[ -z "$asset" ]]; then WHY="no release for $(uname -s)/$(uname -m)"; return 1; fi
  if ! command -v curl >/dev/null 2>&1; then WHY="curl is not installed"; return 1; fi
  url="$BASE_URL/$asset"
  # Same file system as the cache, so the final mv is atomic; removed on any exit.
  if ! mkdir -p "$CACHE_BIN" || ! WORK=$(mktemp -d "$CACHE_BIN/.download.XXXXXX"); then
    WHY="cannot write to $CACHE_BIN"; return 1
  fi
  trap 'rm -rf -- "$WORK"' EXIT
  say "downloading $url ..."
  if ! fetch "$BASE_URL/checksums.txt" "$WORK/checksums.txt"; then
    WHY="$BASE_URL/checksums.txt: $(tail -1 "$WORK/curl.err")"; return 1
  fi
  if ! fetch "$url" "$WORK/$asset"; then WHY="$url: $(tail -1 "$WORK/curl.err")"; return 1; fi
  expected=$(awk -v f="$asset" '$2 == f || $2 == "*" f { print $1; exit }' "$WORK/checksums.txt")
  actual=$(sha256_of "$WORK/$asset")
  if [[ -z "$expected" || "$expected" != "$actual" ]]; then
    WHY="$url: sha256 $actual does not match checksums.txt (${expected:-no line for $asset})"; return 1
  fi
  mkdir "$WORK/x"
  if ! tar -xzf "$WORK/$asset" -C "$WORK/x" temporal 2>"$WORK/tar.err"; then
    WHY="$url: $(tail -1 "$WORK/tar.err")"; return 1
  fi
  chmod 755 "$WORK/x/temporal"
  if ! is_wanted "$WORK/x/temporal"; then WHY="$url: the binary does not report version 1.5.x"; return 1; fi
  mv -f "$WORK/x/temporal" "$CACHED" || { WHY="cannot write $CACHED"; return 1; }
}

if download_release; then
  say "installed the official release $VERSION: $CACHED"
  echo "$CACHED"; exit 0
fi
DOWNLOAD_WHY="$WHY"
say "release download failed ($DOWNLOAD_WHY); falling back to go install"

if ! command -v go >/dev/null 2>&1; then
  GO_WHY="Go is not installed"
else
  mkdir -p "$CACHE_BIN"
  say "building Temporal CLI $VERSION with go install (first time: several minutes)..."
  start=$(date +%s)
  if GOBIN="$CACHE_BIN" CGO_ENABLED=0 GOFLAGS=-mod=mod go install \
    -ldflags "-X github.com/temporalio/cli/temporalcli.Version=$VERSION" "$GO_PACKAGE" >&2 \
    && is_wanted "$CACHED"; then
    say "built in $(($(date +%s) - start)) s: $CACHED"
    echo "$CACHED"; exit 0
  fi
  GO_WHY="it failed (is the Go module proxy reachable? go env GOPROXY)"
fi
echo "ensure-temporal: ERROR: Temporal CLI $VERSION is missing: downloading the release failed ($DOWNLOAD_WHY) and 'go install $GO_PACKAGE' could not be used ($GO_WHY); put 'temporal' $VERSION on PATH or set TEMPORAL_CLI_PATH to it, or set TEMPORAL_ADDRESS to an existing server." >&2
exit 1
