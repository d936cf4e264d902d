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
# median results/s of each build, their ratio and each round's ratio. With
# LOADGEN=each, each build runs its own loadgen: what a change to the
# worker's side of the calls (the client crate) costs shows too. A
# build with budgets gets its admin's open units raised past the job's
# (`perft participant budget root --open-units 1000000`); the simulated
# workers' participants keep the defaults.
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
      --max-connections 4096 >"$data.serve" 2>"$data.log" &
  local pid=$!
  for _ in $(seq 100); do grep -q '^listening on' "$data.serve" 2>/dev/null && break; sleep 0.1; done
  local address; address=$(sed -n 's/^listening on //p' "$data.serve")
  # Loadgen's job (434,021 units) is past the default open units of a
  # participant (100,000) in builds with budgets: the admin raises its own.
  if "$bin" participant budget --help >/dev/null 2>&1; then
    PERFT_TOKEN=$(cat "$data.secret") "$bin" participant budget root --open-units 1000000 \
        --coordinator "http://$address" >/dev/null
  fi
  local loadgen=$after
  [ "${LOADGEN:-after}" = each ] && loadgen=$bin
  PERFT_TOKEN=$(cat "$data.secret") "$loadgen" loadgen --coordinator "http://$address" \
      --workers "$workers" --depth 10 --own-participants >"$data.loadgen" 2>&1 || true
  # The coordinator's CPU (user + system) over the whole run: less moved
  # by other load on the machine than results/s.
  local cpu
  cpu=$(awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$pid/stat")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  local line; line=$(grep 'results/s' "$data.loadgen" | head -1 || true)
  if [ -z "$line" ]; then
    echo "$label round $round: loadgen failed (run again):" >&2; tail -1 "$data.loadgen" >&2
    [ -s "$data.log" ] && { echo "its coordinator logged:" >&2; tail -3 "$data.log" >&2; }
    rm -rf "$data" "$data".*; return 1
  fi
  rm -rf "$data" "$data".*
  echo "$label round $round: $line; coordinator CPU $cpu s"
  echo "$line" | sed -n 's/.* = \([0-9]*\) results\/s.*/\1/p' >>"$work/$label.rates"
  echo "$cpu" >>"$work/$label.cpu"
}

# A failed run (loadgen's connection reset, seen now and then with either
# build) is run again, at most twice.
for round in $(seq "$rounds"); do
  run "$before" before "$round" || run "$before" before "$round" || run "$before" before "$round" || exit 1
  run "$after" after "$round" || run "$after" after "$round" || run "$after" after "$round" || exit 1
done
median() { sort -n "$1" | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
b=$(median "$work/before.rates"); a=$(median "$work/after.rates")
echo "median results/s: before $b, after $a, after/before $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", a/b}')"
paste "$work/before.rates" "$work/after.rates" | awk '{printf "%.3f\n", $2 / $1}' >"$work/ratios"
echo "median coordinator CPU s: before $(median "$work/before.cpu"), after $(median "$work/after.cpu")"
echo "after/before per round: $(tr '\n' ' ' <"$work/ratios")(median $(median "$work/ratios"))"
