#!/usr/bin/env bash
# Fuzzes the running API against its own OpenAPI document with Schemathesis (PyPI), so the document cannot drift from
# what the server accepts and answers: every check (no 5xx, every status declared, schema-valid requests accepted,
# schema-violating ones refused, 405 for methods a path does not have...). Without credentials, with a session token
# (a fresh account's) and with an admin key, each twice: with seed 1 (the same cases every run, so a regression is found again) and with a
# fresh seed, printed (new cases every run; replay a failure with OPENAPI_FUZZ_SEED=<seed>). Any finding fails.
#
# Usage: scripts/openapi_fuzz.sh path/to/touchstone [seconds per run, default 60]
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${1:?usage: scripts/openapi_fuzz.sh path/to/touchstone [seconds]}
budget=${2:-60}
fresh=${OPENAPI_FUZZ_SEED:-$(python3 -c 'import secrets; print(secrets.randbelow(2**31 - 2) + 2)')}
echo "openapi fuzz: seeds 1 and $fresh (replay the second with OPENAPI_FUZZ_SEED=$fresh)"
command -v schemathesis >/dev/null || python3 -m pip install -q schemathesis

work=$(mktemp -d /tmp/touchstone-openapi.XXXXXX)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# An admin key, for the third pair of runs (the admin API).
"$binary" migrate --database "sqlite:$work/fuzz.sqlite" >/dev/null 2>&1
admin_key=$("$binary" admin create-key --name fuzz --database "sqlite:$work/fuzz.sqlite" 2>/dev/null | grep -o 'tsa_[A-Za-z0-9_-]*' | head -1)
[ -n "$admin_key" ] || { echo "openapi fuzz: could not create an admin key" >&2; exit 1; }
TOUCHSTONE_RATE_LIMITS=off TOUCHSTONE_BCRYPT_COST=4 TOUCHSTONE_LOG_LEVEL=error \
  "$binary" serve --port "$port" --database "sqlite:$work/fuzz.sqlite" >"$work/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
base="http://127.0.0.1:$port"
for _ in $(seq 100); do curl -sf "$base/health" >/dev/null && break; sleep 0.1; done

run() {
  local name=$1; shift
  for seed in 1 "$fresh"; do
    echo "openapi fuzz ($name, seed $seed): $budget s"
    if ! schemathesis --config-file scripts/schemathesis.toml run "$base/openapi.json" --checks all --max-time "$budget" \
        --workers 1 --seed "$seed" --no-color "$@" >"$work/$name-$seed.log" 2>&1; then
      cat "$work/$name-$seed.log"
      echo "openapi fuzz ($name, seed $seed): FAILED (the document and the server disagree; see above; replay with OPENAPI_FUZZ_SEED=$seed)" >&2
      exit 1
    fi
    tail -n 12 "$work/$name-$seed.log"
  done
}

run anonymous
token=$(curl -sf "$base/v1/users" -H 'Content-Type: application/json' \
  -d '{"email":"fuzz@example.com","password":"fuzzing password 1"}' | python3 -c 'import json, sys; print(json.load(sys.stdin)["session"]["token"])')
run session -H "Authorization: Bearer $token"
run admin -H "Authorization: Bearer $admin_key"
echo "openapi fuzz: no findings"
