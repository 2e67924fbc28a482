#!/usr/bin/env bash
# Ensure PostgreSQL is reachable and pgvector >= 0.8 is available (idempotent).
#
# Target: $DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test (trust auth).
# - Local server down -> start it with pg_ctlcluster and wait up to ~15 s.
# - Target database missing -> create it.
# - pgvector missing/older than 0.8 on a local server, running as root with apt:
#   build it from Debian trixie's *source* package (deb-src only, no binary
#   packages from trixie) against the server's major version and install it.
# Progress goes to stderr; on failure exactly one "ensure-postgres: ..." line
# says what is missing and how to fix it, and the exit code is non-zero.
set -euo pipefail

MIN_VECTOR=0.8
DEFAULT_URL='postgres://postgres@127.0.0.1:5432/test'
URL="${DATABASE_URL:-$DEFAULT_URL}"
SRC_LIST=/etc/apt/sources.list.d/agentry-trixie-src.list
LOCK_FILE=/tmp/agentry-ensure-postgres.lock

LOG="${TMPDIR:-/tmp}/agentry-ensure-postgres.log"
quiet_failed=0

say() { echo "ensure-postgres: $*" >&2; }
die() {
  local extra=""
  [ "$quiet_failed" = 1 ] && extra=" (command output: $LOG)"
  echo "ensure-postgres: ERROR: $*$extra" >&2
  exit 1
}
# Run a command with its output appended to $LOG, so that a failure still ends
# in one ERROR line (which then points at the log).
quiet() {
  local rc=0
  { echo "=== $(date '+%F %T') $*"; "$@"; } >>"$LOG" 2>&1 || rc=$?
  [ "$rc" -eq 0 ] || quiet_failed=1
  return "$rc"
}

command -v psql >/dev/null 2>&1 ||
  die "psql not found; install the client: apt-get install -y postgresql-client"

# ---- parse the URL (scheme://[user[:pass]@]host[:port][/db][?params]) ----------
scheme="${URL%%://*}"
rest="${URL#*://}"
query=""; [[ "$rest" == *\?* ]] && query="?${rest#*\?}"
rest="${rest%%\?*}"
authority="${rest%%/*}"
db=""; [[ "$rest" == */* ]] && db="${rest#*/}"
hostport="${authority##*@}"
if [[ "$hostport" == \[* ]]; then            # [::1]:5432
  host="${hostport%%]*}"; host="${host#[}"; port="${hostport#*]}"; port="${port#:}"
else
  host="${hostport%%:*}"; port=""; [[ "$hostport" == *:* ]] && port="${hostport##*:}"
fi
port="${port:-5432}"
db="${db:-postgres}"
case "$host" in
  ''|127.0.0.1|localhost|::1) local_server=1 ;;
  *) local_server=0 ;;
esac
# Same server, maintenance DB (the target DB may not exist yet).
admin_url="$scheme://$authority/postgres$query"
redact() { printf '%s' "$1" | sed -E 's#(://[^:/@]+):[^@]*@#\1:***@#'; }
safe_url=$(redact "$URL")
export PGCONNECT_TIMEOUT="${PGCONNECT_TIMEOUT:-5}"

q()  { psql "$URL" -w -X -v ON_ERROR_STOP=1 -Atqc "$1"; }
qa() { psql "$admin_url" -w -X -v ON_ERROR_STOP=1 -Atqc "$1"; }
# "Accepting connections" (auth is checked separately, so a bad password is not
# mistaken for a stopped server).
server_up() {
  if command -v pg_isready >/dev/null 2>&1; then
    pg_isready -q ${host:+-h "$host"} -p "$port" -t 3
  else
    psql "$admin_url" -w -X -Atqc 'SELECT 1' >/dev/null 2>&1
  fi
}

# ---- 1. server reachable (start the local cluster if needed) ------------------
if server_up; then
  say "server at ${host:-socket}:$port is up"
else
  [ "$local_server" = 1 ] ||
    die "cannot connect to $safe_url (remote server); start it or fix DATABASE_URL"
  command -v pg_ctlcluster >/dev/null 2>&1 ||
    die "local PostgreSQL on port $port is not running and pg_ctlcluster is missing; install it: apt-get install -y postgresql"
  # Prefer the cluster configured for this port; else the first installed one.
  ver="" ; cluster=""
  if command -v pg_lsclusters >/dev/null 2>&1; then
    read -r ver cluster < <(pg_lsclusters -h 2>/dev/null | awk -v p="$port" '$3==p {print $1, $2; exit}') || true
  fi
  if [ -z "$ver" ]; then
    ver=$(ls /etc/postgresql 2>/dev/null | head -1) || true; cluster=main
  fi
  [ -n "$ver" ] ||
    die "no PostgreSQL cluster under /etc/postgresql; create one: pg_createcluster 15 main --start"
  say "server not reachable; starting cluster $ver/$cluster"
  quiet pg_ctlcluster --skip-systemctl-redirect "$ver" "$cluster" start ||
    die "pg_ctlcluster $ver $cluster start failed; see /var/log/postgresql/postgresql-$ver-$cluster.log"
  for _ in $(seq 1 30); do server_up && break; sleep 0.5; done
  server_up ||
    die "cluster $ver/$cluster started but ${host:-socket}:$port not reachable within 15 s; see /var/log/postgresql/postgresql-$ver-$cluster.log"
  say "cluster $ver/$cluster is up"
fi

# ---- 2. log in; target database exists; versions (one round trip) -------------
probe=$(qa "SELECT (SELECT count(*) FROM pg_database WHERE datname = '${db//\'/\'\'}')
             || '|' || current_setting('server_version_num')
             || '|' || split_part(current_setting('server_version'), ' ', 1)
             || '|' || coalesce((SELECT max(default_version) FROM pg_available_extensions
                                 WHERE name = 'vector'), '')" 2>&1) ||
  die "cannot log in to $(redact "$admin_url"): $(echo "$probe" | tail -1 | cut -c1-200); fix DATABASE_URL credentials or pg_hba.conf"
IFS='|' read -r db_exists version_num server_version avail <<<"$probe"
major=$(( version_num / 10000 ))
if [ "$db_exists" != 1 ]; then
  say "creating database \"$db\""
  quiet qa "CREATE DATABASE \"${db//\"/\"\"}\"" ||
    die "database \"$db\" does not exist and could not be created; create it: createdb -h $host -p $port $db"
fi

vector_default() { q "SELECT coalesce(max(default_version), '') FROM pg_available_extensions WHERE name = 'vector'"; }
version_ok() { [ -n "$1" ] && [ "$(printf '%s\n%s\n' "$MIN_VECTOR" "$1" | sort -V | head -1)" = "$MIN_VECTOR" ]; }

# ---- 3. pgvector >= 0.8 (build from trixie source if needed) ------------------
build_pgvector() {
  local pg_config="/usr/lib/postgresql/$major/bin/pg_config"
  local mirror need_update=0 updated=0 src srcs
  export DEBIAN_FRONTEND=noninteractive

  # Mirror: reuse the host that already serves Debian here.
  mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
    grep -v '^[[:space:]]*#' | grep -oE 'https?://[^ ]+/debian/?( |$)' | grep -v security | head -1 | tr -d ' ') || true
  mirror="${mirror%/}"; mirror="${mirror:-http://deb.debian.org/debian}"
  local line="deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main"
  if [ "$(cat "$SRC_LIST" 2>/dev/null)" != "$line" ]; then
    say "adding deb-src (source only) for trixie: $SRC_LIST"
    echo "$line" >"$SRC_LIST"
    need_update=1
  fi
  srcs=$(apt-cache showsrc pgvector 2>/dev/null || true)
  [[ "$srcs" =~ Version:\ 0\.([89]|[1-9][0-9]) ]] || need_update=1
  [ -n "$(apt-cache policy "postgresql-server-dev-$major" 2>/dev/null | awk '/Candidate:/ {print $2}' | grep -v none)" ] || need_update=1

  local apt_opts=(-y -q -o DPkg::Lock::Timeout=300)
  if [ "$need_update" = 1 ]; then
    say "apt-get update"
    quiet apt-get "${apt_opts[@]}" update || die "apt-get update failed; check network access to $mirror"
    updated=1
  fi

  local pkgs=("postgresql-server-dev-$major" build-essential dpkg-dev)
  say "installing build deps: ${pkgs[*]}"
  if ! quiet apt-get "${apt_opts[@]}" install --no-install-recommends "${pkgs[@]}"; then
    [ "$updated" = 1 ] && die "apt-get install ${pkgs[*]} failed; run it by hand to see why"
    say "install failed with current lists; apt-get update and retry"
    quiet apt-get "${apt_opts[@]}" update || die "apt-get update failed; check network access to $mirror"
    quiet apt-get "${apt_opts[@]}" install --no-install-recommends "${pkgs[@]}" ||
      die "apt-get install ${pkgs[*]} failed; run it by hand to see why"
  fi
  [ -x "$pg_config" ] || die "$pg_config missing after installing postgresql-server-dev-$major"

  tmp=$(mktemp -d /tmp/agentry-pgvector.XXXXXX)   # global: the EXIT trap uses it
  chmod 755 "$tmp"; chown _apt "$tmp" 2>/dev/null || true   # apt downloads as _apt
  trap 'rm -rf "$tmp"' EXIT
  say "fetching pgvector source from trixie"
  # The source's signature must verify: an unverified package is never built and installed as root.
  (cd "$tmp" && quiet apt-get -q source pgvector/trixie) ||
    die "apt-get source pgvector/trixie failed (output: $LOG); check 'apt-cache showsrc pgvector' and $SRC_LIST"
  src=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*' | head -1)
  [ -n "$src" ] || die "apt-get source gave no pgvector-* directory in $tmp"
  local got="${src##*/pgvector-}"
  version_ok "$got" || die "trixie's pgvector source is $got (< $MIN_VECTOR); install pgvector >= $MIN_VECTOR by hand"

  # OPTFLAGS="" : no -march=native, so the module runs on any x86-64 CPU.
  local make_args=(PG_CONFIG="$pg_config" OPTFLAGS="")
  say "building pgvector $got for PostgreSQL $major"
  if ! quiet make -C "$src" -j"$(nproc)" "${make_args[@]}"; then
    say "build failed; retrying without LLVM bitcode (with_llvm=no)"
    make_args+=(with_llvm=no)
    quiet make -C "$src" clean "${make_args[@]}" || true
    quiet make -C "$src" -j"$(nproc)" "${make_args[@]}" ||
      die "building pgvector $got failed; try by hand: make -C <src> PG_CONFIG=$pg_config"
  fi
  quiet make -C "$src" install "${make_args[@]}" || die "make install of pgvector $got failed"
  rm -rf "$tmp"; trap - EXIT
  say "installed pgvector $got"
}

if version_ok "$avail"; then
  say "pgvector $avail available"
else
  say "pgvector ${avail:-not installed} (need >= $MIN_VECTOR)"
  fix="install pgvector >= $MIN_VECTOR for PostgreSQL $major on the server"
  [ "$local_server" = 1 ] || die "pgvector >= $MIN_VECTOR not available on remote server $host:$port; $fix"
  [ "$(id -u)" = 0 ] || die "pgvector >= $MIN_VECTOR missing; re-run as root to build it: sudo bash scripts/ensure-postgres.sh"
  command -v apt-get >/dev/null 2>&1 || die "pgvector >= $MIN_VECTOR missing and apt-get unavailable; $fix"
  # Serialize concurrent callers (npm start + npm test); re-check after the wait.
  exec 9>"$LOCK_FILE"
  flock -w 1200 9 || die "timed out waiting for another ensure-postgres build ($LOCK_FILE)"
  avail=$(vector_default)
  version_ok "$avail" || build_pgvector
  exec 9>&-
  avail=$(vector_default)
  version_ok "$avail" || die "pgvector still ${avail:-missing} after build; $fix"
fi

# ---- 4. verify the extension really loads (rolled back: changes nothing) ------
vec=$(psql "$URL" -w -X -v ON_ERROR_STOP=1 -Atq 2>&1 <<'SQL'
BEGIN;
CREATE EXTENSION IF NOT EXISTS vector;
SELECT extversion FROM pg_extension WHERE extname = 'vector';
SELECT '[1,2,3]'::vector <-> '[1,2,4]'::vector;
ROLLBACK;
SQL
) || die "CREATE EXTENSION vector failed in \"$db\": $(echo "$vec" | tail -1)"
installed=$(echo "$vec" | head -1)
[ "$installed" = "$avail" ] || say "note: database \"$db\" has vector $installed installed; ALTER EXTENSION vector UPDATE gives $avail"

echo "postgres: PostgreSQL $server_version, pgvector $installed"
