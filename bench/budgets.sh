#!/usr/bin/env bash
# "Defaults a small coordinator survives": with PARTICIPANTS (100)
# participants each at every default budget at once, the coordinator should
# stay under 3 GiB resident and its journal under what the free-space check
# (coordinator/src/space.rs: 160 journal bytes a unit + 64 MiB spare)
# assumes. Builds nothing: give it a release build.
#
#   bench/budgets.sh [PERFT_BINARY] [PARTICIPANTS]
#
# At 100 participants it takes 1.5-2 minutes on 2 quiet cores, 6 under
# two other builds (most of it registering the sessions: each registration
# counts its participant's live sessions over all of them).
#
# Each participant pNNN (role submitter) fills, with no worker running so
# that everything stays open:
#   open jobs   16 (defaults: --budget-open-jobs)
#   open units  100,000 (--budget-open-units): the 16 jobs' automatic
#               splits take 85,340 + 10,649 + 2,733 + 3 x 400 + 2 x 20 +
#               2 x 14 + 2 x 3 units, and four one-unit jobs the rest
#   streams     32 (--budget-streams): watches of its big job, one
#               connection for them all (`perft loadgen-hold`)
#   dashboard   16 (--budget-dashboard-sessions): `?token=` logins, plus a
#   sessions    17th, which ends its own oldest
# and its worker identity pNNN-w (role worker: a submitter may not
# register) holds its 1024 worker sessions (--budget-sessions), registered
# over one connection by `perft loadgen-hold`. So every resource is held at
# its full default figure, none overridden; `loadgen-hold` tries one more
# session and stream each past the budget and reports the refusals.
# Not at default: `--lease-seconds 86400`, since the held sessions send no
# heartbeats (102,400 heartbeats every 5 s would measure the heartbeats),
# and the connection caps, raised because everything comes from 127.0.0.1.
# Jobs use game and depth, not explicit unit lists: the units are those of
# real plans.
#
# Prints what the participants hold (from `perft participant list`), the
# coordinator's VmRSS and VmHWM beside the 3 GiB bar, its CPU over 10 s
# while holding, and journal.sqlite + -wal beside the free-space estimate.
# BUDGETS_KEEP=1 keeps the work dir (its path is printed).
set -euo pipefail
perft=$(realpath "${1:-target/release/perft}")
participants=${2:-100}
work=$(mktemp -d)
data=$work/data
cleanup() {
  kill $(jobs -p) 2>/dev/null || true
  wait 2>/dev/null || true
  if [ "${BUDGETS_KEEP:-}" = 1 ]; then echo "work dir kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
started=$(date +%s)
step() { echo "[$(($(date +%s) - started)) s] $*"; }

"$perft" participant add root --role admin --data-dir "$data" --secret-file "$work/root.secret" 2>/dev/null
"$perft" serve --listen 127.0.0.1:0 --http-listen 127.0.0.1:0 --data-dir "$data" \
  --lease-seconds 86400 --max-connections-per-peer 4096 --max-connections 8192 \
  >"$work/serve.out" 2>"$work/serve.err" &
pid=$!
for _ in $(seq 100); do grep -q '^dashboard on' "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
export PERFT_COORDINATOR=http://$(sed -n 's/^listening on //p' "$work/serve.out")
dashboard=$(sed -n 's/^dashboard on //p' "$work/serve.out")
admin() { PERFT_TOKEN=$(cat "$work/root.secret") "$perft" "$@"; }
step "serving at $PERFT_COORDINATOR (pid $pid), dashboard $dashboard"

names=$(seq -f 'p%03g' 0 $((participants - 1)))
for p in $names; do
  admin participant add "$p" --role submitter --secret-file "$work/$p.secret" 2>/dev/null
  admin participant add "$p-w" --role worker --secret-file "$work/$p-w.secret" 2>/dev/null
done
step "$participants participants added, each with a worker identity"

# The 16 jobs of one participant, biggest first: each automatic split is the
# deepest whole level that fits what is left of 100,000 units.
fill() { # NAME
  local p=$1 job
  export PERFT_TOKEN
  PERFT_TOKEN=$(cat "$work/$p.secret")
  job=$("$perft" submit --game checkers --depth 20)
  echo "$(cat "$work/$p.secret") $job" >"$work/$p.watch"
  for spec in "reversi 20" "checkers 20" "chess 12" "chess 12" "chess 12" "chess 12" "chess 12" \
      "reversi 20" "reversi 20" "reversi 20" "reversi 20"; do
    set -- $spec
    "$perft" submit --game "$1" --depth "$2" >/dev/null
  done
  for _ in 1 2 3 4; do "$perft" submit --game reversi --depth 20 --split-depth 1 >/dev/null; done
}
for p in $names; do fill "$p"; done
step "jobs submitted"

for p in $names; do cat "$work/$p-w.secret"; done >"$work/sessions.list"
for p in $names; do cat "$work/$p.watch"; done >"$work/streams.list"
"$perft" loadgen-hold --coordinator "$PERFT_COORDINATOR" --session-secrets "$work/sessions.list" --sessions 1024 \
  --stream-secrets "$work/streams.list" --streams 32 >"$work/hold.out" 2>"$work/hold.err" &
hold=$!
until grep -q '^held' "$work/hold.out"; do
  kill -0 "$hold" 2>/dev/null || { cat "$work/hold.err"; exit 1; }
  sleep 1
done
step "$(head -1 "$work/hold.out")"

logins=0
for p in $names; do
  secret=$(cat "$work/$p.secret")
  for _ in $(seq 17); do
    code=$(curl -s -o /dev/null -w '%{http_code}' "$dashboard/?token=$secret")
    [ "$code" = 303 ] && logins=$((logins + 1))
  done
done
step "$logins dashboard logins answered with a session cookie (17 a participant)"

sleep 5
ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
t0=$(ticks)
sleep 10
cpu=$(awk -v a="$t0" -v b="$(ticks)" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", (b - a) / hz / 10 * 100 }')
rss=$(awk '/^VmRSS/ { print $2 * 1024 }' "/proc/$pid/status")
hwm=$(awk '/^VmHWM/ { print $2 * 1024 }' "/proc/$pid/status")
journal=$(($(stat -c %s "$data/journal.sqlite") + $(stat -c %s "$data/journal.sqlite-wal" 2>/dev/null || echo 0)))

admin participant list --format json >"$work/list.json"
held() { jq -r --arg r "$1" '[.[] | select(.name | test("^p[0-9]+(-w)?$")) | .budget[$r].used | tonumber] | add' "$work/list.json"; }
full() { jq -r --arg r "$1" '[.[] | select(.name | test("^p[0-9]+(-w)?$")) | .budget[$r] | select(.used == .limit)] | length' "$work/list.json"; }
units=$(held open_units)
gib=$((1 << 30))
estimate=$((units * 160 + (64 << 20)))
mib() { awk -v b="$1" 'BEGIN { printf "%.0f MiB", b / 1048576 }'; }

echo
echo "held by the $participants participants (participants at their budget), from 'perft participant list':"
for r in open_jobs open_units sessions streams dashboard_sessions; do
  printf '  %-18s %10s  (%s at the limit)\n' "$r" "$(held $r)" "$(full $r)"
done
echo "coordinator: VmRSS $(mib "$rss"), VmHWM $(mib "$hwm") (bar: 3 GiB = 3072 MiB;" \
  "$(awk -v a="$hwm" -v b=$((3 * gib)) 'BEGIN { printf "peak %.0f%% of it", a / b * 100 }'))"
echo "coordinator CPU while holding: ${cpu}% of one core over 10 s"
echo "journal.sqlite + -wal: $journal bytes ($(mib "$journal")); free-space estimate for $units units:" \
  "$units x 160 B + 64 MiB = $estimate bytes ($(mib "$estimate"))"
echo "total time: $(($(date +%s) - started)) s"
