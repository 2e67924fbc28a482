#!/usr/bin/env bash
# Ensure a headless Chromium for the browser test (test/e2e/temporal-ui.test.ts, issue 13):
# Debian's `chromium` package, installed with apt when missing and we are root (idempotent).
# $CHROMIUM_PATH, when set, is used as it is. Prints the binary's path on stdout; progress goes
# to stderr; on failure one "ensure-chromium: ..." line says what is missing and how to fix it.
set -euo pipefail

say() { echo "ensure-chromium: $*" >&2; }
die() { echo "ensure-chromium: ERROR: $*" >&2; exit 1; }

if [ -n "${CHROMIUM_PATH:-}" ]; then
  [ -x "$CHROMIUM_PATH" ] || die "CHROMIUM_PATH=$CHROMIUM_PATH is not an executable"
  echo "$CHROMIUM_PATH"; exit 0
fi
find_binary() { command -v chromium 2>/dev/null || command -v chromium-browser 2>/dev/null; }

if bin=$(find_binary); then
  echo "$bin"; exit 0
fi
[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 ||
  die "chromium not found; install it: apt-get install -y chromium (or set CHROMIUM_PATH)"

# Serialise concurrent callers (two test runs); re-check after the wait.
exec 9>/tmp/agentry-ensure-chromium.lock
flock -w 1200 9 || die "timed out waiting for another ensure-chromium install"
if bin=$(find_binary); then
  echo "$bin"; exit 0
fi
LOG="${TMPDIR:-/tmp}/agentry-ensure-chromium.log"
install() {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=300 \
    --no-install-recommends chromium >>"$LOG" 2>&1
}
say "chromium missing; installing Debian's chromium package (output: $LOG)"
install || { apt-get update -q >>"$LOG" 2>&1 && install; } ||
  die "could not install chromium (output: $LOG); run: apt-get update && apt-get install -y chromium"
bin=$(find_binary) || die "chromium still missing after apt-get install; see $LOG"
say "installed $("$bin" --version 2>/dev/null || echo chromium)"
echo "$bin"
