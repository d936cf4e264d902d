#!/usr/bin/env bash
# Side by side: a coordinator's throughput under 1,000 simulated workers,
# each its own participant, for two builds of `perft`, alternating.
#
#   bench/loadgen-ab.sh BEFORE_BINARY AFTER_BINARY [ROUNDS] [WORKERS]
#
# Each run: a fresh data dir with one admin, `perft serve` on loopback,
# then `perft loadgen --own-participants` (Reversi perft(10) split 9,
# 434,021 one-ply units, batch 8) with the SAME loadgen (AFTER's) against
# each server; prints each run's loadgen summary line and, at the end, the
# median results/s of each build and their ratio.
set -euo pipefail
before=${1:?usage: loadgen-ab.sh BEFORE AFTER [ROUNDS] [WORKERS]}
after=${2:?usage: loadgen-ab.sh BEFORE AFTER [ROUNDS] [WORKERS]}
rounds=${3:-3}
workers=${4:-1000}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

run() { # BINARY LABEL ROUND
  local bin=$1 label=$2 round=$3 data="$work/$2-$3"
  "$bin" participant add root --role admin --data-dir "$data" --secret-file "$data.secret" >/dev/null 2>&1
  "$bin" serve --listen 127.0.0.1:0 --data-dir "$data" --max-connections-per-peer 4096 \
      --max-connections 4096 >"$data.serve" 2>/dev/null &
  local pid=$!
  for _ in $(seq 100); do grep -q '^listening on' "$data.serve" 2>/dev/null && break; sleep 0.1; done
  local address; address=$(sed -n 's/^listening on //p' "$data.serve")
  local line
  line=$(PERFT_TOKEN=$(cat "$data.secret") "$after" loadgen --coordinator "http://$address" \
      --workers "$workers" --depth 10 --own-participants 2>/dev/null | grep 'results/s' | head -1)
  kill "$pid"; wait "$pid" 2>/dev/null || true
  echo "$label round $round: $line"
  echo "$line" | sed -n 's/.* = \([0-9]*\) results\/s.*/\1/p' >>"$work/$label.rates"
}

for round in $(seq "$rounds"); do
  run "$before" before "$round"
  run "$after" after "$round"
done
median() { sort -n "$1" | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
b=$(median "$work/before.rates"); a=$(median "$work/after.rates")
echo "median results/s: before $b, after $a, after/before $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", a/b}')"
