#!/usr/bin/env python3
"""Stranger's independent verifier for Deep Perft certificates (Reversi only).

Written from docs/certificate.md and docs/conventions.md alone.
Usage: verify.py [--sample N] [--seed S] [--perft ./perft] [--tt BITS] CERT...
"""
import argparse, os, re, random, subprocess, sys, time, unicodedata, zlib

try:
    import blake3
except ImportError:
    sys.exit("pip install blake3")

MAGIC = b"DPERFTC\n"
M64 = (1 << 64) - 1
GAMES = {"reversi": (17, 30, 64), "checkers": (13, 40, 128), "chess": (30, 16, 256)}  # packed, max depth, MAX_MOVES
KINDS = {
    "reversi": ["passes", "game_overs"],
    "checkers": ["captures", "multi_jumps", "crownings"],
    "chess": ["captures", "enpassants", "castles", "promotions", "direct_checks",
              "single_discovered_checks", "direct_discovered_checks", "double_discovered_checks",
              "total_checks", "direct_mates", "single_discovered_mates", "direct_discovered_mates",
              "double_discovered_mates", "total_mates"],
}


class Refused(Exception):
    """The file is not a readable certificate (exit code 2)."""


# ---------------------------------------------------------------- primitives
class Reader:
    def __init__(self, b):
        self.b, self.i = b, 0

    def byte(self):
        if self.i >= len(self.b):
            raise Refused("the body ends inside a field")
        v = self.b[self.i]; self.i += 1
        return v

    def take(self, n):
        if n > len(self.b) - self.i:
            raise Refused(f"the body ends inside a field ({n} bytes wanted, {len(self.b) - self.i} left)")
        v = self.b[self.i:self.i + n]; self.i += n
        return v

    def varint(self):
        v, shift, n = 0, 0, 0
        while True:
            if self.i >= len(self.b):
                raise Refused("the body ends inside a varint")
            c = self.b[self.i]; self.i += 1; n += 1
            if n > 19:
                raise Refused("a varint runs past 19 bytes")
            if n == 19 and (c & 0x7F) > 0b11:
                raise Refused("a varint runs past 128 bits")
            v |= (c & 0x7F) << shift
            shift += 7
            if not c & 0x80:
                if c == 0 and n > 1:
                    raise Refused("an integer not in its shortest form")
                return v

    def text(self):
        n = self.varint()
        if n > 256:
            raise Refused(f"a text of {n} bytes (at most 256)")
        raw = self.take(n)
        try:
            s = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused("a text that is not UTF-8")
        for ch in s:
            if bad_char(ch):
                raise Refused(f"a text holding U+{ord(ch):04X} (control, line-separating or bidirectional)")
        return s

    def leaves(self):
        a = self.varint(); h = self.varint()
        if h > a:
            raise Refused(f"leaves with higher {h} > all {a}")
        return (a, h)


BIDI = {0x061C, 0x200E, 0x200F} | set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A))


def bad_char(ch):
    o = ord(ch)
    if unicodedata.category(ch) == "Cc":       # C0, DEL, C1 (incl. U+0085 NEL)
        return True
    if o in (0x2028, 0x2029):                   # line / paragraph separator
        return True
    return o in BIDI


def enc_varint(v):
    out = bytearray()
    while True:
        c = v & 0x7F; v >>= 7
        if v:
            out.append(c | 0x80)
        else:
            out.append(c); return bytes(out)


def enc_text(s):
    b = s.encode("utf-8")
    return enc_varint(len(b)) + b


# ---------------------------------------------------------------- reversi
NOT_A = 0xFEFEFEFEFEFEFEFE
NOT_H = 0x7F7F7F7F7F7F7F7F
SHIFTS = [  # (function on a bitboard) for the 8 directions
    lambda b: (b << 1) & NOT_A & M64, lambda b: (b >> 1) & NOT_H,
    lambda b: (b << 8) & M64, lambda b: b >> 8,
    lambda b: (b << 9) & NOT_A & M64, lambda b: (b >> 9) & NOT_H,
    lambda b: (b << 7) & NOT_H & M64, lambda b: (b >> 7) & NOT_A,
]


def moves_bb(P, O):
    empty = ~(P | O) & M64
    m = 0
    for sh in SHIFTS:
        t = sh(P) & O
        for _ in range(5):
            t |= sh(t) & O
        m |= sh(t) & empty
    return m


def flips(P, O, sq):
    f = 0
    b0 = 1 << sq
    for sh in SHIFTS:
        line = 0
        b = sh(b0)
        while b and (b & O):
            line |= b; b = sh(b)
        if b & P:
            f |= line
    return f


def play(pos, sq):
    P, O, c = pos
    if sq is None:   # pass
        return (O, P, 1 - c)
    f = flips(P, O, sq)
    return (O & ~f, P | f | (1 << sq), 1 - c)


def legal_moves(pos):
    """Move order of the spec: ascending squares; else 'pass' if the opponent can move; else none."""
    P, O, _ = pos
    m = moves_bb(P, O)
    if m:
        out = []
        while m:
            low = m & -m; out.append(low.bit_length() - 1); m ^= low
        return out
    if moves_bb(O, P):
        return [None]
    return []


def move_name(sq):
    return "pass" if sq is None else "abcdefgh"[sq & 7] + str(sq // 8 + 1)


def pack(pos):
    P, O, c = pos
    return P.to_bytes(8, "little") + O.to_bytes(8, "little") + bytes([c])


def unpack(b):
    if len(b) != 17:
        raise Refused("a Reversi position is 17 bytes")
    P = int.from_bytes(b[0:8], "little"); O = int.from_bytes(b[8:16], "little")
    if P & O:
        raise Refused("a Reversi position with a square in both colours")
    if b[16] not in (0, 1):
        raise Refused(f"a Reversi position with colour byte {b[16]}")
    return (P, O, b[16])


REV8 = [int(f"{i:08b}"[::-1], 2) for i in range(256)]


def flip_v(x):   # a1 <-> a8
    return int.from_bytes(x.to_bytes(8, "little"), "big")


def mirror_h(x):  # a1 <-> h1
    return int.from_bytes(bytes(REV8[c] for c in x.to_bytes(8, "little")), "little")


def transpose(x):  # a1-h8 diagonal mirror: square (file f, rank r) -> (r, f)
    t = 0x0F0F0F0F00000000 & (x ^ (x << 28)); x ^= t ^ (t >> 28)
    t = 0x3333000033330000 & (x ^ (x << 14)); x ^= t ^ (t >> 14)
    t = 0x5500550055005500 & (x ^ (x << 7)); x ^= t ^ (t >> 7)
    return x & M64


def images(x):
    a = [x, flip_v(x), mirror_h(x)]
    a.append(flip_v(a[2]))
    return a + [transpose(y) for y in a]


def table_key(pos):
    P, O, _ = pos
    return min((p << 64) | o for p, o in zip(images(P), images(O)))


def gameover_perft(conv, d):
    """perft of a position where neither side can move, at remaining depth d."""
    if d == 0:
        return (1, 0)
    if conv == 1:
        return (1, 1 if d >= 2 else 0)
    return (0, 0)


# ---------------------------------------------------------------- reading
def read_certificate(data):
    if len(data) < 10 or data[:8] != MAGIC:
        raise Refused("not a certificate (magic)")
    version = int.from_bytes(data[8:10], "little")
    if version not in (1, 2):
        raise Refused(f"certificate version {version} (this reader knows 1 and 2)")
    comp = data[10:]
    limit = min(16 << 30, max(1 << 20, 64 * len(comp)))
    d = zlib.decompressobj()
    out = bytearray()
    pos = comp
    while pos and not d.eof:
        try:
            out += d.decompress(pos, limit + 1 - len(out))
        except zlib.error as e:
            raise Refused(f"the zlib stream is damaged ({e})")
        if len(out) > limit:
            raise Refused(f"the body expands past {limit} bytes (zlib bomb)")
        pos = d.unconsumed_tail
    if not d.eof:
        raise Refused("the zlib stream is truncated")
    if d.unused_data:
        raise Refused(f"the certificate has {len(d.unused_data)} bytes after its zlib stream, where the file must end")
    body = bytes(out)
    r = Reader(body)
    c = {"version": version, "file_bytes": len(data), "body_bytes": len(body), "compressed": comp}
    c["game"] = g = r.text()
    if g not in GAMES:
        raise Refused(f"unknown game {g!r}")
    psize, maxdepth, maxmoves = GAMES[g]
    c["convention"] = conv = r.byte()
    if g == "reversi" and conv not in (1, 2) or g != "reversi" and conv != 0:
        raise Refused(f"convention {conv} for {g}")
    rootb = r.take(psize)
    if g != "reversi":
        raise Refused(f"this verifier knows Reversi only, not {g}")
    c["root"] = unpack(rootb); c["root_bytes"] = rootb
    c["depth"] = depth = r.varint()
    if depth > maxdepth:
        raise Refused(f"depth {depth} above the game's limit {maxdepth}")
    c["split"] = split = r.varint()
    if not 1 <= split <= depth:
        raise Refused(f"split depth {split} not in 1..={depth}")
    if version == 2 and split >= depth:
        raise Refused("version 2 needs a split depth below the depth")
    F = r.varint()
    if F > len(body):
        raise Refused("more first moves than bytes")
    c["first_moves"] = [r.text() for _ in range(F)]
    c["settled"] = [r.leaves() for _ in range(F)]
    P = r.varint()
    if P > len(body):
        raise Refused("more participants than bytes")
    c["participants"] = [r.text() for _ in range(P)]
    U = r.varint()
    if U * psize > len(body) - r.i:
        raise Refused(f"{U} units do not fit in the body")
    c["positions"] = [r.take(psize) for _ in range(U)]
    weights = []
    for u in range(U):
        W = r.varint()
        if not 1 <= W <= F:
            raise Refused(f"unit {u}: {W} weights (1..={F})")
        ws = []
        for _ in range(W):
            fm = r.varint(); paths = r.varint()
            if fm >= F:
                raise Refused(f"unit {u}: first move index {fm} >= {F}")
            if paths > M64:
                raise Refused(f"unit {u}: paths {paths} > 2^64-1")
            ws.append((fm, paths))
        weights.append(ws)
    c["weights"] = weights
    c["counts"] = [r.leaves() for _ in range(U)]
    deciders = []
    for u in range(U):
        D = r.varint()
        if D > len(body):
            raise Refused(f"unit {u}: {D} deciders")
        ds = []
        for _ in range(D):
            k = r.varint()
            if k >= P:
                raise Refused(f"unit {u}: decider index {k} >= {P}")
            ds.append(k)
        deciders.append(ds)
    c["deciders"] = deciders
    c["divide"] = [r.leaves() for _ in range(F)]
    c["total"] = r.leaves()
    if version == 2:
        K = r.varint()
        if K < 1:
            raise Refused("a kinds section of no kind")
        names = [r.text() for _ in range(K)]
        if names != KINDS[g]:
            raise Refused(f"kind names {names} are not {g}'s {KINDS[g]}")
        c["kind_names"] = names
        kinds = lambda: tuple(r.varint() for _ in range(K))
        c["settled_kinds"] = [kinds() for _ in range(F)]
        c["unit_kinds"] = [kinds() for _ in range(U)]
        c["divide_kinds"] = [kinds() for _ in range(F)]
        c["total_kinds"] = kinds()
    c["merkle"] = r.take(32)
    if r.i != len(body):
        raise Refused(f"{len(body) - r.i} bytes after the Merkle root")
    return c


# ---------------------------------------------------------------- checks
def unit_bytes(c, i):
    b = bytearray(c["positions"][i])
    ws = c["weights"][i]
    b += enc_varint(len(ws))
    for fm, p in ws:
        b += enc_varint(fm) + enc_varint(p)
    a, h = c["counts"][i]
    b += enc_varint(a) + enc_varint(h)
    if c["version"] == 2:
        for k in c["unit_kinds"][i]:
            b += enc_varint(k)
    ds = c["deciders"][i]
    b += enc_varint(len(ds))
    for k in ds:
        b += enc_text(c["participants"][k])
    return bytes(b)


def encode_body(c):
    """Re-encode a decoded certificate body (used for a round-trip check and by the tests)."""
    b = bytearray(enc_text(c["game"])) + bytes([c["convention"]]) + c["root_bytes"]
    b += enc_varint(c["depth"]) + enc_varint(c["split"]) + enc_varint(len(c["first_moves"]))
    for t in c["first_moves"]:
        b += enc_text(t)
    for a, h in c["settled"]:
        b += enc_varint(a) + enc_varint(h)
    b += enc_varint(len(c["participants"]))
    for t in c["participants"]:
        b += enc_text(t)
    b += enc_varint(len(c["positions"]))
    for p in c["positions"]:
        b += p
    for ws in c["weights"]:
        b += enc_varint(len(ws))
        for fm, p in ws:
            b += enc_varint(fm) + enc_varint(p)
    for a, h in c["counts"]:
        b += enc_varint(a) + enc_varint(h)
    for ds in c["deciders"]:
        b += enc_varint(len(ds))
        for k in ds:
            b += enc_varint(k)
    for a, h in c["divide"]:
        b += enc_varint(a) + enc_varint(h)
    b += enc_varint(c["total"][0]) + enc_varint(c["total"][1])
    if c["version"] == 2:
        b += enc_varint(len(c["kind_names"]))
        for t in c["kind_names"]:
            b += enc_text(t)
        for group in (c["settled_kinds"], c["unit_kinds"], c["divide_kinds"], [c["total_kinds"]]):
            for ks in group:
                for k in ks:
                    b += enc_varint(k)
    b += c["merkle"]
    return bytes(b)


def merkle_root(c):
    U = len(c["positions"])
    if U == 0:
        return blake3.blake3(b"\x02").digest()
    level = [blake3.blake3(b"\x00" + i.to_bytes(8, "little") + unit_bytes(c, i)).digest() for i in range(U)]
    while len(level) > 1:
        nxt = [blake3.blake3(b"\x01" + level[j] + level[j + 1]).digest() for j in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0]


def replan(root, depth, split, conv):
    """Returns (first move names, settled leaves per first move, units [(pos, [(fm, paths)...])])."""
    def add(level, index, pos, weights):
        k = table_key(pos)
        j = index.get(k)
        if j is None:
            index[k] = len(level)
            level.append([pos, [list(w) for w in weights]])
        else:
            ws = level[j][1]
            for fm, p in weights:
                for w in ws:
                    if w[0] == fm:
                        w[1] += p; break
                else:
                    ws.append([fm, p])

    first = legal_moves(root)
    F = len(first)
    settled = [[0, 0] for _ in range(F)]
    level, index = [], {}
    for i, mv in enumerate(first):
        add(level, index, play(root, mv), [(i, 1)])
    p = 1
    while p < split:
        nxt, nidx = [], {}
        for pos, ws in level:
            ms = legal_moves(pos)
            if not ms:
                a, h = gameover_perft(conv, depth - p)
                for fm, paths in ws:
                    settled[fm][0] += a * paths; settled[fm][1] += h * paths
                continue
            for mv in ms:
                add(nxt, nidx, play(pos, mv), ws)
        level = nxt
        p += 1
    return [move_name(m) for m in first], [tuple(s) for s in settled], level


def run_perft(perft_bin, tt_bits, jobs):
    """jobs: list of (P, O, depth, conv). Yields (all, higher, seconds)."""
    proc = subprocess.Popen([perft_bin, "-t", str(tt_bits)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for P, O, d, conv in jobs:
        proc.stdin.write(f"{P:x} {O:x} {d} {conv}\n"); proc.stdin.flush()
        a, h, s = proc.stdout.readline().split()
        yield int(a), int(h), float(s)
    proc.stdin.close(); proc.wait()


def verify(path, args, rng):
    out = []
    say = lambda s: (print(s), sys.stdout.flush())
    mism = []
    t0 = time.time()
    data = open(path, "rb").read()
    say(f"== {path}")
    try:
        c = read_certificate(data)
    except Refused as e:
        say(f"REFUSED: {e}")
        say("verdict: NOT A READABLE CERTIFICATE")
        return 2
    conv = c["convention"]; depth = c["depth"]; split = c["split"]; rem = depth - split
    U = len(c["positions"]); F = len(c["first_moves"])
    convname = {1: "bik", 2: "oeis"}[conv]
    tot = c["total"]
    say(f"decoded: version {c['version']}, {c['game']} ({convname} convention), depth {depth}, split depth {split}, "
        f"{U} units, total {tot[0]} ({tot[1]} higher), {c['file_bytes']} bytes ({c['file_bytes'] / max(U, 1):.1f} bytes a unit), "
        f"body {c['body_bytes']} bytes")
    say(f"root: {pack(c['root']).hex()} (colour {c['root'][2]}); first moves: {' '.join(c['first_moves'])}; "
        f"participants: {', '.join(c['participants'])}")
    if encode_body(c) != read_body(data):
        mism.append("MISMATCH the decoded fields do not re-encode to the same body bytes")
    say(f"decode round trip: re-encoding every decoded field gives the body byte for byte: {encode_body(c) == read_body(data)}")
    # informational: recompression with this zlib
    same = zlib.compress(read_body(data), 9) == c["compressed"]
    say(f"info: Python zlib level 9 recompression gives the same bytes: {same}")

    # check 0: counts possible
    maxl = GAMES[c["game"]][2] ** rem
    bad0 = 0
    for i, (a, h) in enumerate(c["counts"]):
        if a > maxl:
            mism.append(f"MISMATCH unit {i}: {a} leaves > {GAMES[c['game']][2]}^{rem}"); bad0 += 1
        if h and (conv == 2 or rem < 2):
            mism.append(f"MISMATCH unit {i}: {h} higher leaves where the convention/depth allows none"); bad0 += 1
    say(f"check 0 (counts possible): {U} units, {bad0} impossible")

    # check 1: re-plan
    t1 = time.time()
    names, settled, units = replan(c["root"], depth, split, conv)
    bad1 = 0
    if names != c["first_moves"]:
        mism.append(f"MISMATCH first moves: plan {names} vs certificate {c['first_moves']}"); bad1 += 1
    if settled != c["settled"]:
        mism.append(f"MISMATCH settled: plan {settled} vs certificate {c['settled']}"); bad1 += 1
    if len(units) != U:
        mism.append(f"MISMATCH unit count: plan {len(units)} vs certificate {U}"); bad1 += 1
    order_diff = 0
    for i in range(min(U, len(units))):
        pos, ws = units[i]
        if pack(pos) != c["positions"][i]:
            mism.append(f"MISMATCH unit {i}: position plan {pack(pos).hex()} vs certificate {c['positions'][i].hex()}"); bad1 += 1
        pw = [tuple(w) for w in ws]
        if sorted(pw) != sorted(c["weights"][i]) or len(set(c["weights"][i])) != len(c["weights"][i]):
            mism.append(f"MISMATCH unit {i}: weights plan {pw} vs certificate {c['weights'][i]}"); bad1 += 1
        elif pw != c["weights"][i]:
            order_diff += 1
    wsum = sum(p for ws in c["weights"] for _, p in ws)
    say(f"check 1 (re-plan): {len(units)} units planned in {time.time() - t1:.2f} s, {bad1} differences; "
        f"weights in the same order as the plan for {U - order_diff}/{U} units; paths summed over units {wsum}; "
        f"settled {sum(s[0] for s in settled)} leaves ({sum(s[1] for s in settled)} higher)")

    # check 2: sums
    bad2 = 0
    div = [[s[0], s[1]] for s in c["settled"]]
    for ws, (a, h) in zip(c["weights"], c["counts"]):
        for fm, p in ws:
            div[fm][0] += p * a; div[fm][1] += p * h
    for f in range(F):
        if tuple(div[f]) != c["divide"][f]:
            mism.append(f"MISMATCH divide {c['first_moves'][f]}: summed {tuple(div[f])} vs certificate {c['divide'][f]}"); bad2 += 1
    if F:
        t = (sum(x[0] for x in c["divide"]), sum(x[1] for x in c["divide"]))
    else:
        t = gameover_perft(conv, depth) if not legal_moves(c["root"]) else None
    if t != c["total"]:
        mism.append(f"MISMATCH total: summed {t} vs certificate {c['total']}"); bad2 += 1
    if max(c["total"]) >= 1 << 128:
        mism.append("MISMATCH total overflows u128"); bad2 += 1
    for f in range(F):
        say(f"  divide {c['first_moves'][f]}: {c['divide'][f][0]} ({c['divide'][f][1]} higher)")
    say(f"check 2 (sums): {F} divide lines and the total, {bad2} differences")
    if c["version"] == 2:
        say("check 2 (kinds): NOT IMPLEMENTED in this verifier (all records are version 1)")

    # check 3: merkle
    mr = merkle_root(c)
    ok3 = mr == c["merkle"]
    if not ok3:
        mism.append(f"MISMATCH merkle root: computed {mr.hex()} vs certificate {c['merkle'].hex()}")
    say(f"check 3 (merkle): root {c['merkle'].hex()} {'recomputed equal' if ok3 else 'DIFFERS from ' + mr.hex()}")

    # extra, informational: deciders and unweighted sums per participant
    per = {p: [0, 0] for p in c["participants"]}
    dcount = {}
    for ds, (a, h) in zip(c["deciders"], c["counts"]):
        dcount[len(ds)] = dcount.get(len(ds), 0) + 1
        for k in ds:
            per[c["participants"][k]][0] += 1; per[c["participants"][k]][1] += a
    say(f"info: deciders per unit {dict(sorted(dcount.items()))}; per participant (units, unweighted leaves): "
        + ", ".join(f"{p} {v[0]} {v[1]}" for p, v in per.items()))

    # check 4: recount sample
    n = min(U, args.sample if args.sample is not None else max(2, (U + 99) // 100))
    idx = sorted(rng.sample(range(U), n)) if n else []
    if args.units:
        idx = sorted(set(idx) | {int(x) for x in args.units.split(",") if int(x) < U}); n = len(idx)
    say(f"check 4 (recount): sampled units {idx if n < U else 'all ' + str(U)}")
    t4 = time.time()
    jobs = []
    for i in idx:
        P, O, col = unpack(c["positions"][i])
        jobs.append((P, O, rem, conv))
    bad4 = 0
    for i, (a, h, s) in zip(idx, run_perft(args.perft, args.tt, jobs)):
        okc = (a, h) == c["counts"][i]
        if not okc:
            mism.append(f"MISMATCH unit {i} ({c['positions'][i].hex()}): recounted {(a, h)} vs certificate {c['counts'][i]}"); bad4 += 1
        if args.verbose:
            say(f"  unit {i}: {a} ({h} higher) in {s:.2f} s {'ok' if okc else 'MISMATCH'}")
    if F == 0 and U == 0:
        say("  root without moves: total compared above with the game-over perft")
    say(f"check 4 (recount): {n} of {U} units recounted at remaining depth {rem} in {time.time() - t4:.2f} s, {bad4} differ")
    if n:
        for line in guarantees(U, n):
            say(line)
    compare_audit(c, path, say, mism)
    for m in mism[:50]:
        say(m)
    if len(mism) > 50:
        say(f"... and {len(mism) - 50} more")
    say(f"verdict: {'PASSED' if not mism else 'FAILED'} ({time.time() - t0:.2f} s)")
    return 0 if not mism else 1


def sci(p):
    m, e = f"{p:.3e}".split("e")
    return f"{m}e{int(e)}"


def guarantees(U, n):
    out, seen = [], set()
    for f, name in ((0, "0%"), (0.001, "0.1%"), (0.01, "1%"), (0.1, "10%")):
        K = int(f * U) + 1
        if K in seen or K > U:
            continue
        seen.add(K)
        p = 1.0
        for j in range(n):
            p *= max(U - K - j, 0) / (U - j)
        out.append(f"guarantee: a certificate in which more than {name} of the units are wrong ({K} or more of {U}) "
                   f"would have passed this audit with probability at most {sci(p)}")
    return out


def compare_audit(c, path, say, mism):
    """Compare with the publisher's audit.txt next to the certificate (what it prints)."""
    ap = os.path.join(os.path.dirname(path), "audit.txt")
    if not os.path.exists(ap):
        return
    txt = open(ap).read()
    U = len(c["positions"]); conv = {1: "bik", 2: "oeis"}[c["convention"]]
    tot = c["total"]
    hi = f" ({tot[1]} higher)" if tot[1] else ""
    mine = (f"certificate: {c['game']} ({conv} convention), depth {c['depth']}, split depth {c['split']}, {U} units, "
            f"total {tot[0]}{hi}, {c['file_bytes']} bytes ({c['file_bytes'] / U:.1f} bytes a unit)")
    first = txt.splitlines()[0]
    say(f"audit.txt first line {'EQUAL to' if first == mine else 'DIFFERS from'} mine: {first}")
    if first != mine:
        say(f"  mine: {mine}")
    # divide.txt and status.txt
    dp = os.path.join(os.path.dirname(path), "divide.txt")
    if os.path.exists(dp):
        kv = dict(l.split(": ", 1) for l in open(dp).read().splitlines() if ": " in l)
        want = {n: str(d[0]) for n, d in zip(c["first_moves"], c["divide"])}
        want.update({"total": str(tot[0]), "full depth": str(tot[0] - tot[1]), "higher": str(tot[1])})
        diff = [k for k in want if kv.get(k) != want[k]]
        say(f"divide.txt: {len(want)} lines (divide, total, full depth, higher) {'all EQUAL' if not diff else 'DIFFER: ' + str(diff)}")
        if diff:
            mism.append(f"MISMATCH divide.txt lines {diff}")
    sp = os.path.join(os.path.dirname(path), "status.txt")
    if os.path.exists(sp):
        kv = dict(l.split(": ", 1) for l in open(sp).read().splitlines() if ": " in l)
        want = {"game": c["game"], "depth": str(c["depth"]), "split depth": str(c["split"]),
                "units": f"{U}/{U} (0 handed out again)", "leaves so far": str(tot[0])}
        if "convention" in kv:
            want["convention"] = conv
        diff = [k for k in want if kv.get(k) != want[k]]
        root_txt = kv.get("position", "")
        board = "".join("X" if (c["root"][0] if c["root"][2] == 0 else c["root"][1]) >> s & 1 else
                        "O" if (c["root"][1] if c["root"][2] == 0 else c["root"][0]) >> s & 1 else "-" for s in range(64))
        board += " " + "XO"[c["root"][2]]
        say(f"status.txt: {', '.join(want)}, position {'all EQUAL' if not diff and board == root_txt else 'DIFFER: ' + str(diff) + ' ' + board}"
            + ("" if "convention" in kv else " (no convention line: read as Bik's)"))
        if diff or board != root_txt:
            mism.append(f"MISMATCH status.txt {diff}")
    m = re.search(r"merkle: root ([0-9a-f]{64})", txt)
    say("audit.txt merkle root: " + (("equal" if m.group(1) == c["merkle"].hex() else "DIFFERENT " + m.group(1)) if m
                                      else "not printed (only '" + re.search(r"merkle:.*", txt).group(0) + "')"))
    say("audit.txt sampled unit indices: " + ("printed" if "sampled units" in txt else "not printed"))
    m = re.search(r"recount: (\d+) of (\d+) units", txt)
    if m:
        n = int(m.group(1))
        theirs = [l for l in txt.splitlines() if l.startswith("guarantee:")]
        ours = guarantees(U, n)
        say(f"audit.txt guarantee lines for their n={n}: {'all EQUAL to' if theirs == ours else 'DIFFER from'} mine")
        if theirs != ours:
            for l in ours:
                say("  mine: " + l)


def read_body(data):
    return zlib.decompress(data[10:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("certs", nargs="+")
    ap.add_argument("--sample", type=int, default=None, help="units to recount per certificate (default 1%%, at least 2)")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--perft", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "perft"))
    ap.add_argument("--tt", type=int, default=23, help="perft table bits (0 = none)")
    ap.add_argument("--units", default="", help="comma-separated unit indices to recount as well")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    print(f"seed: {seed}")
    worst = 0
    for p in args.certs:
        rng = random.Random(f"{seed}:{os.path.basename(os.path.dirname(os.path.abspath(p)))}")
        worst = max(worst, verify(p, args, rng))
    sys.exit(worst)


if __name__ == "__main__":
    main()
