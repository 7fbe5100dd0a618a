#!/usr/bin/env bash
# Fault test with real containers (issue: deployment). Starts the coordinator and 3 workers
# with docker-compose, submits a multi-task job with a known exact value, and during it:
#   1. docker kill one worker,
#   2. docker network disconnect another, and reconnect it after its lease has expired,
#   3. restart the coordinator container,
#   4. scale the workers from 3 to 1 and back to 3.
# The job must end `done` with the known value and no task counted twice. Prints a timeline.
# Tears everything down at the end, pass or fail. Skips (exit 0, a SKIPPED line) when no
# Docker engine is reachable.
#
#   deploy/fault-test.sh            (builds the image first with deploy/build-images.sh)
#
# Status: runs end to end and passes here, but the default job is light enough to finish before
# the faults hit; it needs a heavier position and a check that the job was still running at each
# fault before .ci/run calls it (the deployment issue stays open until then).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! docker info >/dev/null 2>&1 || ! command -v docker-compose >/dev/null 2>&1; then
  echo "fault-test: SKIPPED (no Docker engine or docker-compose on this machine)"
  exit 0
fi

project="gsfault$$"
port="${FAULT_PORT:-18480}"
# A Connect Four position whose exact value is known (Pons' set Test_L2_R2); the exact value is
# found by threshold probes spread over the workers.
position="${FAULT_POSITION:-2252576253462244111563365343671351441}"
expected="${FAULT_EXPECTED:--1}"
lease_ms="${FAULT_LEASE_MS:-3000}"

t0=$(date +%s.%N)
say() { printf '[%7.2fs] %s\n' "$(echo "$(date +%s.%N) - $t0" | bc)" "$*"; }

envfile=$(mktemp)
printf 'GAMESOLVER_WORKER_TOKEN=fault-test-%s\nGAMESOLVER_API_TOKEN=\n' "$$" >"$envfile"
override=$(mktemp --suffix=.yml)
cat >"$override" <<EOF
services:
  coordinator:
    env_file: $envfile
    command: ["serve", "--listen", "0.0.0.0:8080", "--db", "/data/gamesolver.db", "--lease-ms", "$lease_ms", "--parallelism", "3"]
  worker:
    env_file: $envfile
EOF
export GAMESOLVER_BIND=127.0.0.1 GAMESOLVER_PORT="$port"
compose() { docker-compose -p "$project" -f docker-compose.yml -f "$override" "$@"; }

cleanup() {
  status=$?
  say "tearing down"
  compose down -v --remove-orphans >/dev/null 2>&1 || true
  rm -f "$envfile" "$override"
  exit $status
}
trap cleanup EXIT

api() { curl -sS --max-time 5 "$@"; }
job_state() { api "http://127.0.0.1:$port/v1/jobs/$1" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["state"])'; }
workers() { docker ps -q --filter "label=com.docker.compose.project=$project" --filter "label=com.docker.compose.service=worker"; }

say "building the image"
deploy/build-images.sh >/dev/null
say "starting coordinator and 3 workers"
compose up -d --scale worker=3 >/dev/null
for _ in $(seq 1 60); do
  api "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  sleep 0.5
done
say "coordinator healthy"

body=$(printf '{"game":"connect4","position":"%s","algorithm":"alphabeta"}' "$position")
id=$(api -X POST -H 'content-type: application/json' -d "$body" "http://127.0.0.1:$port/v1/jobs" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
say "submitted job $id (expected value $expected)"

sleep 2
victim=$(workers | head -n1)
docker kill "$victim" >/dev/null
say "fault 1: killed worker ${victim:0:12}"

net="${project}_default"
cut=$(workers | head -n1)
docker network disconnect "$net" "$cut"
say "fault 2: disconnected worker ${cut:0:12} from $net"
sleep $(( lease_ms / 1000 + 3 ))
docker network connect "$net" "$cut"
say "fault 2: reconnected worker ${cut:0:12} after its lease expired"

compose restart coordinator >/dev/null
say "fault 3: restarted the coordinator"

compose up -d --no-recreate --scale worker=1 >/dev/null
say "fault 4: scaled workers to 1"
sleep 2
compose up -d --no-recreate --scale worker=3 >/dev/null
say "fault 4: scaled workers back to 3"

state=""
for _ in $(seq 1 600); do
  state=$(job_state "$id" 2>/dev/null || echo unreachable)
  case "$state" in done|failed|cancelled) break ;; esac
  sleep 1
done
say "job ended: $state"
report=$(mktemp)
api "http://127.0.0.1:$port/v1/jobs/$id" >"$report"
python3 - "$expected" "$report" <<'PY'
import json, sys
expected = json.loads(sys.argv[1])
job = json.load(open(sys.argv[2]))
assert job["state"] == "done", f"job state {job['state']}: {job.get('error')}"
value = job["result"]["value"]
assert value == expected, f"value {value}, expected {expected}"
tasks = job["tasks"]
assert tasks["done"] <= tasks["total"], f"tasks counted twice: {tasks}"
print(f"fault-test: value {value} as expected; tasks {tasks}")
PY
rm -f "$report"
say "PASSED"
