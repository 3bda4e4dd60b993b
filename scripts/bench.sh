#!/usr/bin/env bash
# Reproduces the performance table of README.md and docs/performance.md.
#
#   scripts/bench.sh            full run (about 10 minutes on 2 cores, after the release build)
#   QUICK=1 scripts/bench.sh    fewer levels, shorter runs (a smoke run of the script itself)
#
# Builds release, then against a server on SQLite (one instance): `bench verify`; biometric and passkey ceremonies at
# 1, 4, 16, 64 and 256 concurrent devices; the same at 64 devices with group commit and the key cache turned off
# (the "before" of docs/performance.md); latency and memory with 1,000 and 100,000 stored registrations (alternately,
# three runs each). Then,
# when PostgreSQL can be started (scripts/postgres.sh, fsync on), the device levels again against two instances
# sharing one database. Writes artifacts/bench/results.jsonl, results.md (the tables) and throughput.png (the plot).
# The load generator runs on the same machine as the server(s): both share the two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${BENCH_OUT:-artifacts/bench}
duration=${DURATION:-10}
levels=${LEVELS:-"1 4 16 64 256"}
large=${LARGE:-100000}
scale_rounds=${SCALE_ROUNDS:-3}
if [ -n "${QUICK:-}" ]; then duration=2; levels="1 16 64"; large=5000; scale_rounds=1; fi
mkdir -p "$out"
work=$(mktemp -d /tmp/touchstone-bench.XXXXXX)
chmod 755 "$work"  # the PostgreSQL cluster inside runs as the postgres user
results="$out/results.jsonl"
: > "$results"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -n "${pg_dir:-}" ]; then scripts/postgres.sh stop "$pg_dir" || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

swift build -c release --product touchstone >&2
bin=.build/release/touchstone

# The DPoP side by side runs the server on one core and the load generator on the other, when it can: the load
# generator signs a proof per request (a phone's work, elsewhere in production), which on shared cores would take the
# server's CPU and make a rate the load generator's as much as the server's.
pin_server=() pin_load=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then pin_server=(taskset -c 0) pin_load=(taskset -c 1); fi
server_prefix=()

# start_server PORT DATABASE [ENV=VALUE...]: starts a server in the background, waits until it is ready; sets $server_pid.
# The server runs under ${server_prefix[@]} (a core of its own for the DPoP runs).
start_server() {
  local port=$1 database=$2
  shift 2
  env TOUCHSTONE_BCRYPT_COST=4 TOUCHSTONE_LOG_LEVEL=warning TOUCHSTONE_RATE_LIMITS=off "$@" \
    ${server_prefix[@]+"${server_prefix[@]}"} "$bin" serve --host 127.0.0.1 --port "$port" --database "$database" >"$work/server-$port.log" 2>&1 &
  server_pid=$!
  pids+=("$server_pid")
  for _ in $(seq 1 200); do
    if curl -fsS "http://127.0.0.1:$port/health/ready" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  echo "server on port $port did not start:" >&2
  cat "$work/server-$port.log" >&2
  exit 1
}

stop_servers() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pids=()
}

# bench LABEL KIND DEVICES STORED SERVER_ARGS...: one `bench login` run, appended to results.jsonl with its labels.
bench() {
  local label=$1 kind=$2 devices=$3 stored=$4
  shift 4
  echo "== $label: $kind, $devices devices" >&2
  "$bin" bench login --kind "$kind" --devices "$devices" --duration "$duration" --warmup 1 --json "$@" >"$work/run.json"
  python3 - "$label" "$stored" "$work/run.json" >>"$results" <<'PY'
import json, sys
label, stored, path = sys.argv[1], sys.argv[2], sys.argv[3]
report = json.load(open(path))
report["label"] = label
report["stored"] = stored
print(json.dumps(report))
PY
  tail -1 "$results" | python3 -c '
import json, sys
r = json.load(sys.stdin)
l = r["latencyMs"]
print("   %.0f/s  p50 %.2f ms  p99 %.2f ms  errors %s" % (r["ceremoniesPerSecond"], l["p50"], l["p99"], r["errors"]), file=sys.stderr)'
}

count_registrations() {
  python3 - "$1" <<'PY'
import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("SELECT COUNT(*) FROM registrations").fetchone()[0])
PY
}

echo "== bench verify" >&2
"$bin" bench verify --seconds "$([ -n "${QUICK:-}" ] && echo 0.5 || echo 2)" --json >"$out/verify.json"

# SQLite, one instance: throughput against concurrency.
db="$work/levels.sqlite"
start_server 18401 "sqlite:$db"
for kind in biometric passkey; do
  for n in $levels; do
    bench "sqlite" "$kind" "$n" "$(count_registrations "$db")" --server http://127.0.0.1:18401 --server-pid "$server_pid"
  done
done
stop_servers

# The OpenID provider, SQLite, one instance: complete code flows (authorize with a signed-in browser → token with PKCE
# → userinfo) and refresh-token grants, 64 browsers each, from a first-party confidential client.
oidc_db="$work/oidc.sqlite"
"$bin" migrate --database "sqlite:$oidc_db" >&2
oidc_client=$("$bin" clients create --database "sqlite:$oidc_db" --name Bench --redirect-uri http://127.0.0.1/cb --first-party)
oidc_id=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["clientId"])' "$oidc_client")
oidc_secret=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["clientSecret"])' "$oidc_client")
start_server 18406 "sqlite:$oidc_db"
# oidc_run RUN [LABEL_PREFIX] [LOAD_PREFIX...]: one `bench oidc` run (flow, refresh, dpop-flow, dpop-refresh).
oidc_run() {
  local run=$1 prefix=$2 mode=${1#dpop-}
  shift 2
  local dpop=(); [ "$run" != "$mode" ] && dpop=(--dpop)
  echo "== ${prefix}oidc: $run, 64 browsers" >&2
  "$@" "$bin" bench oidc --server "http://127.0.0.1:$oidc_port" --client-id "$oidc_id" --client-secret "$oidc_secret" \
    --redirect-uri http://127.0.0.1/cb --mode "$mode" --browsers 64 --duration "$duration" --warmup 1 --server-pid "$server_pid" \
    "${dpop[@]}" --json >"$work/oidc.json"
  python3 - "$run" "$prefix" "$work/oidc.json" >>"$results" <<'PY'
import json, sys
run, prefix = sys.argv[1], sys.argv[2]
report = json.load(open(sys.argv[3]))
report["label"] = prefix + (("dpop-oidc-" + run[5:]) if run.startswith("dpop-") else "oidc-" + run)
print(json.dumps(report))
PY
  tail -1 "$results" | python3 -c '
import json, sys
r = json.load(sys.stdin)
l = r["latencyMs"]
print("   %.0f/s  p50 %.2f ms  p99 %.2f ms  errors %s" % (r["perSecond"], l["p50"], l["p99"], r["errors"]), file=sys.stderr)'
}
oidc_port=18406
for run in flow refresh; do oidc_run "$run" ""; done
stop_servers

# DPoP (issue #43), side by side: the server on one core, the load generator on the other (above). The token endpoint
# and UserInfo checking a proof per request; the refresh grants twice alternately.
server_prefix=(${pin_server[@]+"${pin_server[@]}"})
oidc_port=18408
start_server 18408 "sqlite:$oidc_db"
for run in flow dpop-flow refresh dpop-refresh refresh dpop-refresh; do oidc_run "$run" "pinned-" ${pin_load[@]+"${pin_load[@]}"}; done
stop_servers

# Calls with a phone's session (issue #43): GET /v1/session, bearer sessions and sessions bound to the phone's proof
# key (a DPoP proof per call), 64 phones each, alternately twice: as fast as the phones go, then at one rate for both
# ($session_rate calls/s), where the server's CPU per call compares the two at the same load.
session_rate=${SESSION_RATE:-4000}
start_server 18407 "sqlite:$work/session.sqlite"
for run in bearer dpop bearer dpop rate-bearer rate-dpop rate-bearer rate-dpop; do
  extra=(); [ "${run#rate-}" = dpop ] && extra=(--dpop)
  [ "$run" != "${run#rate-}" ] && extra+=(--rate "$session_rate")
  echo "== session: $run, 64 phones" >&2
  ${pin_load[@]+"${pin_load[@]}"} "$bin" bench session --server http://127.0.0.1:18407 --phones 64 --duration "$duration" --warmup 1 \
    --server-pid "$server_pid" "${extra[@]}" --json >"$work/session.json"
  python3 - "$run" "$session_rate" "$work/session.json" >>"$results" <<'PY'
import json, sys
report = json.load(open(sys.argv[3]))
report["label"] = "session-" + sys.argv[1]
if sys.argv[1].startswith("rate-"):
    report["rate"] = float(sys.argv[2])
print(json.dumps(report))
PY
done
stop_servers
server_prefix=()

# Round one's switches (docs/performance.md): group commit and key cache off and on, same binary, same run.
for variant in "before:TOUCHSTONE_SQLITE_COMMIT_BATCH=1 TOUCHSTONE_KEY_CACHE_SIZE=0" \
  "no-group-commit:TOUCHSTONE_SQLITE_COMMIT_BATCH=1" "no-key-cache:TOUCHSTONE_KEY_CACHE_SIZE=0" "after:TOUCHSTONE_KEY_CACHE_SIZE=10000"; do
  name=${variant%%:*}
  # shellcheck disable=SC2086
  start_server 18402 "sqlite:$work/$name.sqlite" ${variant#*:}
  bench "variant-$name" biometric 64 0 --server http://127.0.0.1:18402 --server-pid "$server_pid"
  stop_servers
done

# Stored registrations: a database seeded with 1,000 and one with $large, 64 devices, run alternately $scale_rounds
# times each: the machine's speed drifts by a fifth within minutes (the load generator's own CPU per ceremony, which
# the table size cannot change, moves as much), and alternating puts both sizes under the same drift. The report
# compares their medians.
small_db="$work/scale-small.sqlite"
large_db="$work/scale-large.sqlite"
"$bin" bench seed --database "sqlite:$small_db" --registrations 1000 >&2
echo "== seeding $large registrations" >&2
"$bin" bench seed --database "sqlite:$large_db" --registrations "$large" >&2
for _ in $(seq 1 "$scale_rounds"); do
  for size in small large; do
    db="$work/scale-$size.sqlite"
    start_server 18403 "sqlite:$db"
    bench "scale-$size" biometric 64 "$(count_registrations "$db")" --server http://127.0.0.1:18403 --server-pid "$server_pid"
    stop_servers
  done
done
scripts/query_plans.py "$large_db" >"$out/query-plans.txt"

# PostgreSQL, two instances sharing one database, when a cluster can be started here.
if pg_url=$(PG_FSYNC=on scripts/postgres.sh start "$work/pg" 55499 2>"$work/pg.log"); then
  pg_dir="$work/pg"
  # Both instances seal and open the token-signing keys with the same key-encryption key (required on PostgreSQL).
  kek=$(python3 -c 'import base64, os; print(base64.b64encode(os.urandom(32)).decode())')
  start_server 18404 "$pg_url" TOUCHSTONE_KEY_ENCRYPTION_KEY="$kek" TOUCHSTONE_MAIL_DIR="$work/mail"
  first=$server_pid
  start_server 18405 "$pg_url" TOUCHSTONE_KEY_ENCRYPTION_KEY="$kek" TOUCHSTONE_MAIL_DIR="$work/mail"
  second=$server_pid
  for kind in biometric passkey; do
    for n in $levels; do
      bench "postgres-2" "$kind" "$n" 0 --server http://127.0.0.1:18404 --server http://127.0.0.1:18405 \
        --server-pid "$first" --server-pid "$second"
    done
  done
  stop_servers
else
  echo "PostgreSQL could not be started; its rows are left out (see $work/pg.log)" >&2
fi

python3 scripts/bench_report.py "$out"
