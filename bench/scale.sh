#!/usr/bin/env bash
# The coordinator at record scale (issue 10): plans and journals one big job
# while simulated workers report on another, then restarts and cancels it,
# sampling the coordinator's resident memory all along.
#
#   bench/scale.sh PERFT_BINARY [GAME DEPTH SPLIT [LOADGEN_WORKERS]]
#
# Prints one line per figure: plan+journal seconds, peak and resident memory
# while the job is open, restart-to-serving seconds, memory after cancel.
set -euo pipefail
perft=$(realpath "$1")
game=${2:-checkers}
depth=${3:-22}
split=${4:-12}
workers=${5:-0}
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$dir"' EXIT
port=$((20000 + RANDOM % 20000))
url=http://127.0.0.1:$port

serve() {
  "$perft" serve --listen 127.0.0.1:$port --data-dir "$dir/data" --max-units 40000000 \
    >>"$dir/serve.log" 2>&1 &
  pid=$!
  until "$perft" health --coordinator "$url" >/dev/null 2>&1; do sleep 0.05; done
}
rss() { awk '/^VmRSS/ { printf "%.0f", $2 / 1024 }' /proc/$pid/status; }
hwm() { awk '/^VmHWM/ { printf "%.0f", $2 / 1024 }' /proc/$pid/status; }

serve
echo "idle: resident $(rss) MiB"
if [ "$workers" -gt 0 ]; then
  # Units one ply deep, enough of them (2.96 M) to outlast the submit.
  "$perft" loadgen --coordinator "$url" --workers "$workers" --game reversi --depth 11 \
    --latency-log "$dir/acks.log" >"$dir/loadgen.log" 2>&1 &
  loadgen=$!
  until grep -q planned "$dir/loadgen.log"; do sleep 0.2; done
  sleep 5
fi
start=$(date +%s.%N)
job=$("$perft" submit --coordinator "$url" --game "$game" --depth "$depth" --split-depth "$split")
end=$(date +%s.%N)
units=$("$perft" status --coordinator "$url" "$job" | awk -F"[/ ]" "/^units:/ { print \$3 }")
echo "plan and journal: $units units in $(echo "$end - $start" | bc) s; peak $(hwm) MiB, resident $(rss) MiB"
if [ "$workers" -gt 0 ]; then
  wait "$loadgen" || true
  cat "$dir/loadgen.log"
  python3 - "$dir/acks.log" "$start" "$end" <<'PY'
import sys
start, end = float(sys.argv[2]) * 1000, float(sys.argv[3]) * 1000
during = sorted(int(l.split()[1]) for l in open(sys.argv[1]) if start <= int(l.split()[0]) <= end)
if during:
    q = lambda p: during[min(len(during) - 1, int(p * len(during)))] / 1000
    print(f"report acknowledgement during the submit ({len(during)} calls): p50 {q(0.5):.1f} ms, p99 {q(0.99):.1f} ms, max {during[-1] / 1000:.1f} ms")
PY
fi
kill -TERM $pid; wait $pid || true
start=$(date +%s.%N)
serve
end=$(date +%s.%N)
echo "restart to serving: $(echo "$end - $start" | bc) s; peak $(hwm) MiB, resident $(rss) MiB"
"$perft" cancel --coordinator "$url" "$job" >/dev/null
sleep 1
echo "after cancel: resident $(rss) MiB"
kill -TERM $pid; wait $pid || true
echo "journal: $(du -sm "$dir/data" | cut -f1) MiB"
grep -h "job planned\|job queued\|journal open" "$dir/serve.log" | cut -c1-160 || true
