#!/usr/bin/env bash
# End to end on Docker: the static binary, the image FROM scratch, the
# compose cluster with three workers; a job submitted from the CLI while
# one worker is killed and another cut off the network must come out exact,
# counted by the participant the compose file provisions for its workers.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! docker info >/dev/null 2>&1; then
  echo "############################################################" >&2
  echo "WARNING: no Docker engine answers here: the image and compose" >&2
  echo "test did NOT run. Everything else was checked." >&2
  echo "############################################################" >&2
  exit 0
fi
if command -v docker-compose >/dev/null 2>&1; then compose=(docker-compose); else compose=(docker compose); fi

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
project=perftci$$
export PERFT_IMAGE=deep-perft:ci
export PERFT_TOKEN=ci-$RANDOM$RANDOM$RANDOM
export PERFT_PORT=$(free_port) PERFT_METRICS_PORT=$(free_port) PERFT_LEASE_SECONDS=3
export PERFT_IMAGE_PROFILE=dev
perft=target/image/perft
url=http://127.0.0.1:$PERFT_PORT

deploy/build-image.sh "$PERFT_IMAGE" scratch
cleanup() { "${compose[@]}" -p "$project" -f deploy/compose.yaml down -v --remove-orphans >/dev/null 2>&1 || true; }
trap cleanup EXIT
"${compose[@]}" -p "$project" -f deploy/compose.yaml up -d --scale worker=3

for _ in $(seq 60); do "$perft" health --coordinator "$url" >/dev/null 2>&1 && break; sleep 1; done
"$perft" health --coordinator "$url"
job=$("$perft" submit --coordinator "$url" --game checkers --depth 15)
echo "job $job submitted"
sleep 4
mapfile -t workers < <(docker ps -q --filter "label=com.docker.compose.project=$project" \
  --filter "label=com.docker.compose.service=worker")
[ "${#workers[@]}" -eq 3 ] || { echo "expected 3 workers, found ${#workers[@]}" >&2; exit 1; }
docker kill "${workers[0]}" >/dev/null
docker network disconnect "${project}_default" "${workers[1]}"
echo "killed worker ${workers[0]:0:12}, cut worker ${workers[1]:0:12} off the network"

timeout 900 "$perft" watch --coordinator "$url" "$job"
leaves=$("$perft" divide --coordinator "$url" "$job" --format json \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["leaves"])')
"$perft" status --coordinator "$url" "$job"
if [ "$leaves" != 36263167175 ]; then
  echo "compose test FAILED: $leaves leaves, published checkers perft(15) is 36263167175" >&2
  exit 1
fi
# The workers counted as the participant the compose file provisioned.
credit=$("$perft" participant list --coordinator "$url" --format json \
  | python3 -c 'import json, sys; print(next(p["units"] for p in json.load(sys.stdin) if p["name"] == "compose-workers"))')
if [ "$credit" = 0 ]; then
  echo "compose test FAILED: the participant compose-workers is credited with no unit" >&2
  exit 1
fi
echo "compose test passed: checkers perft(15) = $leaves with one worker killed and one cut off; compose-workers counted $credit units"
