#!/usr/bin/env bash
# Table hit rate per worker on a real job (issue 10's locality figure):
# a coordinator and two one-thread workers with their own tables count
# GAME perft(DEPTH); prints each worker's probes, hits and hit rate, its
# units, the workers' CPU seconds and the coordinator's.
#
#   bench/locality.sh PERFT_BINARY [GAME DEPTH HASH]
#
# Env: WORKERS (2), SPLIT (plies expanded into units; default: the
#      coordinator's choice).
set -euo pipefail
perft=$(realpath "$1")
game=${2:-checkers}
depth=${3:-17}
hash=${4:-1G}
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$dir"' EXIT
port=$((20000 + RANDOM % 20000))
url=http://127.0.0.1:$port
"$perft" serve --listen 127.0.0.1:$port --data-dir "$dir/data" >"$dir/serve.log" 2>&1 &
serve_pid=$!
until "$perft" health --coordinator "$url" >/dev/null 2>&1; do sleep 0.05; done
pids=()
for w in $(seq 1 ${WORKERS:-2}); do
  "$perft" worker --coordinator "$url" --name "w$w" --threads 1 --hash "$hash" \
    --metrics-listen "127.0.0.1:$((port + w))" >"$dir/w$w.log" 2>&1 &
  pids+=($!)
done
sleep 2
start=$(date +%s.%N)
job=$("$perft" submit --coordinator "$url" --game "$game" --depth "$depth" ${SPLIT:+--split-depth "$SPLIT"})
until "$perft" status --coordinator "$url" "$job" | grep -q "state: done"; do sleep 1; done
end=$(date +%s.%N)
"$perft" status --coordinator "$url" "$job" | grep -E "^(split depth|units|leaves so far)"
echo "wall: $(echo "$end - $start" | bc) s"
cpu=0
user=0
for w in $(seq 1 ${WORKERS:-2}); do
  metrics=$(curl -s "127.0.0.1:$((port + w))/metrics")
  value() { echo "$metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
  probes=$(value perft_worker_table_probes_total)
  hits=$(value perft_worker_table_hits_total)
  units=$(value perft_worker_units_total)
  echo "w$w: $units units, $probes probes, $hits hits, hit rate $(echo "scale=4; $hits / $probes" | bc)"
  read -r utime stime < <(awk '{ print $14, $15 }' /proc/${pids[$((w - 1))]}/stat)
  cpu=$(echo "$cpu + ($utime + $stime) / $(getconf CLK_TCK)" | bc -l)
  user=$(echo "$user + $utime / $(getconf CLK_TCK)" | bc -l)
done
# System time is mostly the tables' first touch, which on a VM depends on
# how recently the memory was freed: user time is the count's own.
printf "workers' CPU: %.1f s (%.1f user, %.1f system)\n" "$cpu" "$user" "$(echo "$cpu - $user" | bc -l)"
ticks=$(awk '{ print $14 + $15 }' /proc/$serve_pid/stat)
printf "coordinator's CPU: %.1f s\n" "$(echo "$ticks / $(getconf CLK_TCK)" | bc -l)"
