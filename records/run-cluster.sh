#!/usr/bin/env bash
# Counts one record on a cluster of this machine, as records/README.md
# describes: a coordinator, two workers with their own participant
# credentials (so that --verify means two owners), then the job's
# certificate and a 1% audit. Everything lands in records/NAME/.
#
#   records/run-cluster.sh NAME GAME DEPTH [--convention C] [--verify] [--split-depth S]
#
# Environment: PERFT (the binary, default target/release/perft), HASH (each
# worker's table, default 4G), THREADS (per worker, default 1), PORT
# (default 50990), AUDIT_FRACTION (default 0.01), NICE (default 0), WORK
# (the cluster's data dir and logs, kept afterwards; default /tmp/perft-record-NAME).
set -euo pipefail
cd "$(dirname "$0")/.."

name=${1:?usage: run-cluster.sh NAME GAME DEPTH [submit options]}
game=${2:?game}
depth=${3:?depth}
shift 3
perft=${PERFT:-target/release/perft}
hash=${HASH:-4G}
threads=${THREADS:-1}
port=${PORT:-50990}
fraction=${AUDIT_FRACTION:-0.01}
niceness=${NICE:-0}

out=records/$name
work=${WORK:-${TMPDIR:-/tmp}/perft-record-$name}
rm -rf "$work"
mkdir -p "$out"
url=http://127.0.0.1:$port
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT

"$perft" participant add records-admin --role admin --data-dir "$work/data" --secret-file "$work/admin.secret" >/dev/null
for w in worker-a worker-b; do
  "$perft" participant add "$w" --role worker --data-dir "$work/data" --secret-file "$work/$w.secret" >/dev/null
done
nice -n "$niceness" "$perft" serve --listen "127.0.0.1:$port" --data-dir "$work/data" >"$work/serve.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do "$perft" health --coordinator "$url" >/dev/null 2>&1 && break; sleep 0.1; done
for w in worker-a worker-b; do
  nice -n "$niceness" "$perft" worker --coordinator "$url" --token-file "$work/$w.secret" --name "$w" \
    --threads "$threads" --hash "$hash" >"$work/$w.log" 2>&1 &
  pids+=($!)
done

admin=(--coordinator "$url" --token-file "$work/admin.secret")
started=$(date +%s.%N)
job=$("$perft" submit "${admin[@]}" --game "$game" --depth "$depth" "$@")
"$perft" watch "${admin[@]}" "$job" >"$work/watch.log" 2>&1
ended=$(date +%s.%N)
"$perft" status "${admin[@]}" "$job" | tee "$out/status.txt"
"$perft" divide "${admin[@]}" "$job" | tee "$out/divide.txt"
"$perft" participant list "${admin[@]}" | tee "$out/participants.txt"
"$perft" certificate "${admin[@]}" "$job" --output "$out/certificate.cert"
cpu=$(for pid in "${pids[@]}"; do awk '{print $14 + $15}' "/proc/$pid/stat"; done | paste -sd+ | bc)
{
  echo "command: records/run-cluster.sh $name $game $depth $*"
  echo "binary: $("$perft" --version) ($(git rev-parse --short HEAD))"
  echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB"
  echo "cluster: one coordinator, workers worker-a and worker-b ($threads thread(s), $hash table each)"
  echo "wall seconds: $(echo "$ended - $started" | bc)"
  echo "cpu seconds (coordinator + workers): $(echo "scale=1; $cpu / $(getconf CLK_TCK)" | bc)"
  echo "certificate bytes: $(stat -c %s "$out/certificate.cert")"
} | tee "$out/run.txt"
audit_started=$(date +%s.%N)
"$perft" audit "$out/certificate.cert" --fraction "$fraction" --seed "$(date +%s)" --threads 2 | tee "$out/audit.txt"
echo "audit wall seconds: $(echo "$(date +%s.%N) - $audit_started" | bc)" | tee -a "$out/audit.txt"
