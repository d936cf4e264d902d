#!/usr/bin/env bash
# Side by side: a Deep Perft binary against the anchors that build.sh made. Each pair of
# commands runs in turn (A B A B ...), after a warm-up pair for the short cases, and every
# count is checked.
#   bench/anchors/compare.sh PERFT [CASE...]   CASE: a a13 b c d e f (default: a b c d e f)
#     a, a13  Reversi d12 (d13), one thread, no table: the raw generator vs Egaroucid and
#             vs Edax; `run --no-hash` (it merges transpositions and symmetries) vs Egaroucid
#     b       Reversi d14, one thread, 2G table vs Edax with 2^25 entries (2.4 GB)
#     c       checkers d12, one thread, no table vs DarkHorse
#     d       checkers d15 and d16, one thread, 2G table vs DarkHorse with 2147mb
#     e       Deep Perft on 2 threads vs 1 thread, the runs of b and d
#     f       NATIVE (built with RUSTFLAGS='-C target-cpu=native') vs PERFT, the runs of a and c
#   RUNS pairs per case (default 5), RUNS_TABLE for b, d and e (default 3).
# Figures: median [min-max] of wall s, CPU s (user + system) and peak RSS (its floor is
# this script's own, ~14 MiB), median system s; ratio A/B pair by pair, of leaves/s in a, c
# and f, of CPU s in b and d, of wall s in e.
set -euo pipefail
[ $# -ge 1 ] || { sed -n '2,17p' "$0"; exit 2; }
export PERFT BIN NATIVE=${NATIVE:-} RUNS=${RUNS:-5} RUNS_TABLE=${RUNS_TABLE:-3}
PERFT=$(realpath "$1") BIN=${ANCHORS:-${TMPDIR:-/tmp}/anchors}/bin
shift
python3 - "${@:-a b c d e f}" <<'PY'
import os, statistics, subprocess, sys, time
P, B, N = os.environ["PERFT"], os.environ["BIN"], os.environ["NATIVE"]
RUNS, RT = int(os.environ["RUNS"]), int(os.environ["RUNS_TABLE"])
want = sys.argv[1].split() if len(sys.argv) == 2 else sys.argv[1:]
REV = {12: 1939886636, 13: 18429641748, 14: 184042084512}     # Bik: all leaves
REV_FULL = {12: 1939886052, 13: 18429634780, 14: 184042061172}  # Bik: full depth (Edax)
CHK = {12: 388623673, 15: 36263167175, 16: 165629569428}

def raw(p, game, d):
    return f"{p} bench-case --game {game} --depth {d} --threads 1 --raw"
def run(game, d, threads, table):
    return f"{P} run --game {game} --depth {d} --threads {threads} {table} --format json"

cases = []  # (case, name, A command, A count, B command, B count, leaves, metric, runs)
def pair(case, name, a, b, count, b_count=None, metric="rate"):
    cases.append((case, name, a, count, b, b_count or count, count, metric, RUNS if metric == "rate" else RT))

for d in (12, 13):
    if ("a" if d == 12 else "a13") in want:
        ega = f"{B}/egaroucid -perft {d} 1"
        pair("a", f"reversi d{d} raw vs Egaroucid", raw(P, "reversi", d), ega, REV[d])
        pair("a", f"reversi d{d} raw vs Edax", raw(P, "reversi", d), f"{B}/edax-perft {d}", REV[d], REV_FULL[d])
        pair("a", f"reversi d{d} run --no-hash vs Egaroucid", run("reversi", d, 1, "--no-hash"), ega, REV[d])
if "b" in want:
    pair("b", "reversi d14 2G vs Edax 2^25", run("reversi", 14, 1, "--hash 2G"), f"{B}/edax-perft 14 25",
         REV[14], REV_FULL[14], "cpu")
if "c" in want:
    pair("c", "checkers d12 raw vs DarkHorse", raw(P, "checkers", 12), f"{B}/darkhorse 12", CHK[12])
if "d" in want:
    for d in (15, 16):
        pair("d", f"checkers d{d} 2G vs DarkHorse 2147mb", run("checkers", d, 1, "--hash 2G"),
             f"{B}/darkhorse-table {d} 2147mb", CHK[d], metric="cpu")
if "e" in want:
    for game, d, n in (("reversi", 14, REV[14]), ("checkers", 15, CHK[15]), ("checkers", 16, CHK[16])):
        pair("e", f"{game} d{d} 2G, 2 threads vs 1", run(game, d, 2, "--hash 2G"), run(game, d, 1, "--hash 2G"),
             n, metric="wall")
if "f" in want:
    if not N:
        sys.exit("case f needs NATIVE=<perft built with RUSTFLAGS='-C target-cpu=native'>")
    for game, n in (("reversi", REV[12]), ("checkers", CHK[12])):
        pair("f", f"{game} d12 raw, native vs default", raw(N, game, 12), raw(P, game, 12), n)

def once(cmd, count):
    """Wall s, CPU s, peak RSS MiB and system s of one run, after checking its count."""
    start = time.monotonic()
    p = subprocess.Popen(cmd.split(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    if status or str(count) not in out:
        sys.exit(f"FAILED (status {status}, expected {count}): {cmd}\n{out[-500:]}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, ru.ru_stime

def spread(xs, f="{:.2f}"):
    return f"{f.format(statistics.median(xs))} [{f.format(min(xs))}-{f.format(max(xs))}]"

print("| case | A vs B | A wall s | B wall s | A CPU s | B CPU s | sys s A/B | A peak MiB | B peak MiB | A/B of | A/B |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for case, name, a, na, b, nb, leaves, metric, runs in cases:
    if metric == "rate":  # warm-up pair
        once(a, na)
        once(b, nb)
    ra, rb = [], []
    for _ in range(runs):
        ra.append(once(a, na))
        rb.append(once(b, nb))
    i = 1 if metric == "cpu" else 0
    ratios = [y[i] / x[i] if metric == "rate" else x[i] / y[i] for x, y in zip(ra, rb)]
    cols = [spread([r[k] for r in rs], "{:.0f}" if k == 2 else "{:.2f}") for k in range(3) for rs in (ra, rb)]
    cols.insert(4, "/".join(f"{statistics.median(r[3] for r in rs):.2f}" for rs in (ra, rb)))
    of = "leaves/s" if metric == "rate" else f"{metric} s"
    print(f"| {case} | {name} | {' | '.join(cols)} | {of} | {spread(ratios)} |", flush=True)
    if metric == "rate":
        rate = lambda rs: spread([leaves / r[0] / 1e6 for r in rs], "{:.0f}")
        print(f"| | M leaves/s (wall) | {rate(ra)} | {rate(rb)} | | | | | | | |", flush=True)
print(f"\nA = Deep Perft ({P}), B = anchor ({B}). Commands:")
for case, name, a, _, b, *_ in cases:
    print(f"  {case} {name}:\n    A: {a}\n    B: {b}")
PY
