#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on loopback, for tests and local runs.
#   scripts/postgres.sh start [DIR] [PORT]   prints the URL to use as TOUCHSTONE_TEST_POSTGRES_URL / --database
#   scripts/postgres.sh stop  [DIR]
#   scripts/postgres.sh url   [DIR] [PORT]
# Installs Debian's postgresql if needed. Runs the server as the 'postgres' user when invoked as root (initdb refuses
# to run as root). Trust authentication on 127.0.0.1 only: never expose this cluster.
# fsync is off unless PG_FSYNC=on (tests need speed, not durability; benchmarks set PG_FSYNC=on to be honest).
set -euo pipefail
cmd=${1:-start}
dir=${2:-/tmp/touchstone-pg}
port=${3:-55432}
url="postgres://touchstone@127.0.0.1:$port/touchstone?sslmode=disable"

bindir() {
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
  if [ -z "$found" ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >&2
    apt-get install -y -q postgresql >&2
    found=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  fi
  echo "$found"
}

# The server must not keep open any descriptor its caller passed down (a test runner notices that a child ended when
# the pipes it gave it close): close everything but the standard streams and bash's own script handle.
close_inherited_fds() {
  local fd
  for fd in $(ls /proc/$$/fd); do
    case "$fd" in 0 | 1 | 2 | 255) ;; *) eval "exec $fd>&-" 2>/dev/null || true ;; esac
  done
}

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$cmd" in
  start)
    bin=$(bindir)
    if [ ! -f "$dir/PG_VERSION" ]; then
      mkdir -p "$dir"
      [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
      as_owner "$bin/initdb" -D "$dir" -U postgres --auth=trust --encoding=UTF8 --no-sync >/dev/null
    fi
    if ! as_owner "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
      close_inherited_fds
      as_owner "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=${PG_FSYNC:-off} -c max_connections=1000" start >/dev/null
    fi
    psql() { as_owner "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -v ON_ERROR_STOP=1 -qtA "$@"; }
    [ "$(psql -c "SELECT 1 FROM pg_roles WHERE rolname='touchstone'")" = 1 ] || psql -c "CREATE ROLE touchstone LOGIN"
    [ "$(psql -c "SELECT 1 FROM pg_database WHERE datname='touchstone'")" = 1 ] ||
      psql -c "CREATE DATABASE touchstone OWNER touchstone"
    echo "$url"
    ;;
  stop)
    bin=$(bindir)
    as_owner "$bin/pg_ctl" -D "$dir" -m fast stop >/dev/null 2>&1 || true
    ;;
  url)
    echo "$url"
    ;;
  *)
    echo "usage: $0 start|stop|url [DIR] [PORT]" >&2
    exit 2
    ;;
esac
