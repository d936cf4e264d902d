#!/usr/bin/env python3
"""Self-consistency of the re-planner on endgame roots with passes and game overs (paths the
published records never exercise): settled + sum(paths x unit perft) == perft(root) for both conventions."""
import os, random, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import verify as v
PERFT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "perft")
rng = random.Random(5)
tested = 0; passes_seen = settled_seen = merged_colours = 0
while tested < 40:
    pos = v.unpack(bytes.fromhex("0000001008000000000000081000000000"))
    plies = rng.randint(44, 58)
    for _ in range(plies):
        ms = v.legal_moves(pos)
        if not ms: break
        pos = v.play(pos, rng.choice(ms))
    if not v.legal_moves(pos): continue
    depth = rng.randint(4, 9); split = rng.randint(1, depth)
    for conv in (1, 2):
        names, settled, units = v.replan(pos, depth, split, conv)
        passes_seen += "pass" in names
        settled_seen += any(s[0] for s in settled)
        merged_colours += len({u[0][2] for u in units}) > 1
        jobs = [(u[0][0], u[0][1], depth - split, conv) for u in units] + [(pos[0], pos[1], depth, conv)]
        res = list(v.run_perft(PERFT, 16, jobs))
        direct = res[-1][:2]
        tot = [sum(s[0] for s in settled), sum(s[1] for s in settled)]
        for (p, ws), (a, h, _) in zip(units, res):
            for fm, paths in ws:
                tot[0] += paths * a; tot[1] += paths * h
        ok = tuple(tot) == direct
        if not ok:
            print("FAIL", v.pack(pos).hex(), depth, split, conv, tot, direct); sys.exit(1)
    tested += 1
print(f"{tested} endgame roots x 2 conventions consistent; roots with a pass first move {passes_seen}, "
      f"plans with settled leaves {settled_seen}, unit levels mixing colours {merged_colours}")
