#!/usr/bin/env python3
"""Recount EVERY unit of the two depth-15 certificates (they share one plan) in one walk per unit
that yields both conventions, and rebuild both totals independently.
Usage: full_recount.py BIK_CERT OEIS_CERT [--jobs 2] [--tt 23]"""
import argparse, os, subprocess, sys, threading, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import verify as v

ap = argparse.ArgumentParser()
ap.add_argument("bik"); ap.add_argument("oeis")
ap.add_argument("--jobs", type=int, default=2); ap.add_argument("--tt", type=int, default=23)
a = ap.parse_args()
B = v.read_certificate(open(a.bik, "rb").read()); O = v.read_certificate(open(a.oeis, "rb").read())
assert B["convention"] == 1 and O["convention"] == 2
assert B["positions"] == O["positions"] and B["weights"] == O["weights"] and B["depth"] == O["depth"] and B["split"] == O["split"]
rem = B["depth"] - B["split"]; U = len(B["positions"])
perft = os.path.join(os.path.dirname(os.path.abspath(__file__)), "perft")
res = [None] * U
def worker(k):
    idx = list(range(k, U, a.jobs))
    jobs = []
    for i in idx:
        P, Q, _ = v.unpack(B["positions"][i]); jobs.append(f"{P:x} {Q:x} {rem} 3\n")
    p = subprocess.Popen([perft, "-t", str(a.tt)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for i, j in zip(idx, jobs):
        p.stdin.write(j); p.stdin.flush()
        full, g1, g2, s = p.stdout.readline().split()
        res[i] = (int(full), int(g1), int(g2), float(s))
    p.stdin.close(); p.wait()
t0 = time.time()
ths = [threading.Thread(target=worker, args=(k,)) for k in range(a.jobs)]
for t in ths: t.start()
last = 0
while any(t.is_alive() for t in ths):
    time.sleep(30)
    done = sum(r is not None for r in res)
    print(f"{time.time() - t0:.0f} s: {done}/{U} units", flush=True)
for t in ths: t.join()
bad = 0
F = len(B["first_moves"])
divB = [list(s) for s in B["settled"]]; divO = [list(s) for s in O["settled"]]
for i, (full, g1, g2, s) in enumerate(res):
    bik = (full + g1 + g2, g2); oe = (full, 0)
    if bik != B["counts"][i]: print(f"MISMATCH bik unit {i}: {bik} vs {B['counts'][i]}"); bad += 1
    if oe != O["counts"][i]: print(f"MISMATCH oeis unit {i}: {oe} vs {O['counts'][i]}"); bad += 1
    for fm, paths in B["weights"][i]:
        divB[fm][0] += paths * bik[0]; divB[fm][1] += paths * bik[1]
        divO[fm][0] += paths * oe[0]
totB = (sum(d[0] for d in divB), sum(d[1] for d in divB)); totO = sum(d[0] for d in divO)
print(f"all {U} units recounted at remaining depth {rem} in {time.time() - t0:.1f} s wall "
      f"({sum(r[3] for r in res):.1f} s summed over units), {bad} unit mismatches")
print(f"Bik perft({B['depth']}) from my own unit counts: {totB[0]} ({totB[1]} higher); certificate {B['total']}: "
      f"{'EQUAL' if totB == B['total'] else 'DIFFERENT'}")
print(f"A124004({O['depth']}) from my own unit counts: {totO}; certificate {O['total'][0]}: "
      f"{'EQUAL' if totO == O['total'][0] else 'DIFFERENT'}")
sys.exit(1 if bad or totB != B["total"] or totO != O["total"][0] else 0)
