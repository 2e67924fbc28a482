#!/usr/bin/env bash
# Ensure Redis answers PING (idempotent).
#
# Target: $REDIS_URL, else redis://127.0.0.1:6379.
# - Answers already -> nothing to do.
# - Local target not answering -> start redis-server on the URL's port
#   (no persistence, bound to loopback), installing it via apt first when it is
#   missing and we are root. Waits up to ~10 s for PONG.
# Progress goes to stderr; on failure exactly one "ensure-redis: ..." line says
# what is missing and how to fix it, and the exit code is non-zero.
set -euo pipefail

URL="${REDIS_URL:-redis://127.0.0.1:6379}"

say() { echo "ensure-redis: $*" >&2; }
die() { echo "ensure-redis: ERROR: $*" >&2; exit 1; }

# ---- parse redis[s]://[user[:pass]@]host[:port][/db] --------------------------
rest="${URL#*://}"
rest="${rest%%\?*}"
hostport="${rest%%/*}"; hostport="${hostport##*@}"
if [[ "$hostport" == \[* ]]; then            # [::1]:6379
  host="${hostport%%]*}"; host="${host#[}"; port="${hostport#*]}"; port="${port#:}"
else
  host="${hostport%%:*}"; port=""; [[ "$hostport" == *:* ]] && port="${hostport##*:}"
fi
host="${host:-127.0.0.1}"; port="${port:-6379}"
case "$host" in
  127.0.0.1|localhost|::1) local_server=1 ;;
  *) local_server=0 ;;
esac
# A password in the URL is applied to an instance that we start ourselves.
pass=""
userinfo="${rest%%/*}"
if [[ "$userinfo" == *@* ]]; then
  userinfo="${userinfo%@*}"; [[ "$userinfo" == *:* ]] && pass="${userinfo#*:}"
fi
safe_url=$(printf '%s' "$URL" | sed -E 's#(://[^@/]*):[^@]*@#\1:***@#')

# redis-cli is needed for every check; install redis-tools if we can.
if ! command -v redis-cli >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "redis-cli missing; installing redis-tools"
    install_tools() {
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=300 \
        --no-install-recommends redis-tools >/dev/null 2>&1
    }
    install_tools || { apt-get update -q >/dev/null 2>&1 && install_tools; } ||
      die "could not install redis-tools; run: apt-get update && apt-get install -y redis-tools"
  else
    die "redis-cli not found; install it: apt-get install -y redis-tools"
  fi
fi

# redis-cli 7.0 sends AUTH "" <pass> for redis://:pass@host; name the user.
CLI_URL="${URL/:\/\/:/://default:}"
ping() { [ "$(timeout 5 redis-cli --no-auth-warning -u "$CLI_URL" ping 2>/dev/null)" = PONG ]; }

if ping; then
  say "redis at $host:$port answers"
else
  [ "$local_server" = 1 ] ||
    die "redis at $safe_url does not answer PING (remote); start it or fix REDIS_URL"

  if ! command -v redis-server >/dev/null 2>&1; then
    [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 ||
      die "redis-server not installed; install it as root: apt-get install -y --no-install-recommends redis-server"
    say "installing redis-server (apt)"
    export DEBIAN_FRONTEND=noninteractive
    apt_install() { apt-get install -y -q -o DPkg::Lock::Timeout=300 --no-install-recommends redis-server >/dev/null 2>&1; }
    if ! apt_install; then
      say "install failed with current package lists; apt-get update and retry"
      apt-get update -q >/dev/null 2>&1 || die "apt-get update failed; check access to the Debian mirror"
      apt_install || die "apt-get install redis-server failed; run it by hand to see why"
    fi
    # The Debian package may have started its own instance on 6379.
    ping && say "packaged redis-server is running"
  fi

  if ! ping; then
    if [ "$(id -u)" = 0 ]; then
      dir=/var/lib/redis; logdir=/var/log/redis
    else
      dir="${TMPDIR:-/tmp}/agentry-redis"; logdir="$dir"
    fi
    [ "$port" = 6379 ] || dir="$dir/$port"     # one working dir per extra port
    mkdir -p "$dir" "$logdir" ||
      die "cannot create $dir or $logdir; create them or run as root"
    log="$logdir/agentry-redis-$port.log"
    say "starting redis-server on 127.0.0.1:$port (log: $log)"
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$port" \
      --save "" --appendonly no --dir "$dir" \
      --logfile "$log" --pidfile "/tmp/agentry-redis-$port.pid" \
      ${pass:+--requirepass "$pass"} >/dev/null 2>&1 ||
      die "redis-server failed to start on port $port; see $log"
    for _ in $(seq 1 40); do ping && break; sleep 0.25; done
    ping || die "redis-server on port $port gave no PONG within 10 s; see $log"
  fi
fi

version=$(timeout 5 redis-cli --no-auth-warning -u "$CLI_URL" info server 2>/dev/null |
  tr -d '\r' | awk -F: '$1 == "redis_version" {print $2}') || true
echo "redis: ${version:-unknown}"
