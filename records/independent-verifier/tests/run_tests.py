#!/usr/bin/env python3
"""Mutate a published certificate in the ways the spec says must be refused or caught,
and check that verify.py refuses (exit 2) or reports a MISMATCH (exit 1)."""
import os, subprocess, sys, zlib
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import verify as v

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "a124004-15", "certificate.cert")
data = open(SRC, "rb").read()
body = zlib.decompress(data[10:])
c = v.read_certificate(data)
OUT = os.path.join(HERE, "out"); os.makedirs(OUT, exist_ok=True)


def wrap(b, version=1):
    return v.MAGIC + version.to_bytes(2, "little") + zlib.compress(b, 9)


def with_merkle(c2):
    c2["merkle"] = v.merkle_root(c2)
    return c2


def clone():
    return v.read_certificate(data)


cases = []  # (name, bytes, expected exit, extra args)
cases.append(("version 3", data[:8] + b"\x03\x00" + data[10:], 2, []))
cases.append(("one byte after the zlib stream", data + b"\x00", 2, []))
cases.append(("truncated zlib stream", data[:-5], 2, []))
cases.append(("bad magic", b"X" + data[1:], 2, []))
cases.append(("bad adler-32", data[:-1] + bytes([data[-1] ^ 1]), 2, []))
# non-canonical varint: depth 15 (0x0f) written as 8f 00
i = len(v.enc_text("reversi")) + 1 + 17
assert body[i] == 15
cases.append(("non-canonical varint (depth 8f 00)", wrap(body[:i] + b"\x8f\x00" + body[i + 1:]), 2, []))
cases.append(("byte after the Merkle root", wrap(body + b"\x00"), 2, []))
cases.append(("version 1 file holding a kinds section", wrap(body[:-32] + b"\x02\x06passes\x0agame_overs" + b"\x00" * 2 * 4 * 3 + b"\x00\x00" + body[-32:]), 2, []))
c2 = clone(); c2["participants"][0] = "worker\u202ea"
cases.append(("bidi character in a participant", wrap(v.encode_body(with_merkle(c2))), 2, []))
c2 = clone(); c2["participants"][0] = "worker\na"
cases.append(("newline in a participant", wrap(v.encode_body(with_merkle(c2))), 2, []))
c2 = clone(); c2["counts"][0] = (c2["counts"][0][0], c2["counts"][0][0] + 1)
cases.append(("higher > all", wrap(v.encode_body(with_merkle(c2))), 2, []))
c2 = clone(); c2["convention"] = 0
cases.append(("convention 0 for reversi", wrap(v.encode_body(with_merkle(c2))), 2, []))
c2 = clone(); c2["weights"][0] = [(9, 1)]
cases.append(("first move index out of range", wrap(v.encode_body(with_merkle(c2))), 2, []))
c2 = clone(); c2["split"] = 16
cases.append(("split depth above depth", wrap(v.encode_body(with_merkle(c2))), 2, []))
c2 = clone(); c2["root_bytes"] = c2["root_bytes"][:16] + b"\x02"
cases.append(("root colour byte 2", wrap(v.encode_body(with_merkle(c2))), 2, []))
# caught by checks, not the reader
c2 = clone(); c2["counts"][5] = (c2["counts"][5][0] + 1, 0)
cases.append(("one count changed (sums + merkle)", wrap(v.encode_body(c2)), 1, []))
c2 = clone(); c2["counts"][5] = (c2["counts"][5][0], 1)
cases.append(("higher leaves in OEIS convention (check 0)", wrap(v.encode_body(c2)), 1, []))
c2 = clone(); c2["merkle"] = bytes(32)
cases.append(("merkle root zeroed", wrap(v.encode_body(c2)), 1, []))
c2 = clone()
multi = next(k for k, ws in enumerate(c2["weights"]) if len(ws) > 1)
c2["weights"][multi] = c2["weights"][multi][::-1]
cases.append((f"weights of unit {multi} reversed (plan passes as sets, merkle differs)", wrap(v.encode_body(c2)), 1, []))
# a consistent forgery: unit 7 +1 leaf, divide/total fixed, merkle recomputed; only the recount can see it
c2 = clone(); u = 7
c2["counts"][u] = (c2["counts"][u][0] + 1, 0)
div = [list(s) for s in c2["settled"]]
for ws, (a, h) in zip(c2["weights"], c2["counts"]):
    for fm, p in ws:
        div[fm][0] += p * a; div[fm][1] += p * h
c2["divide"] = [tuple(d) for d in div]
c2["total"] = (sum(d[0] for d in div), sum(d[1] for d in div))
cases.append(("consistent forgery of unit 7, recounted", wrap(v.encode_body(with_merkle(c2))), 1, ["--units", "7"]))
cases.append(("consistent forgery of unit 7, not sampled", wrap(v.encode_body(with_merkle(c2))), 0, []))
c2 = clone(); c2["positions"][3], c2["positions"][4] = c2["positions"][4], c2["positions"][3]
cases.append(("two unit positions swapped (re-plan)", wrap(v.encode_body(with_merkle(c2))), 1, []))
cases.append(("zlib bomb (body + 8 MiB of zeros)", wrap(body + bytes(8 << 20)), 2, []))
cases.append(("unchanged", data, 0, []))

fails = 0
for k, (name, b, want, extra) in enumerate(cases):
    p = os.path.join(OUT, f"case{k:02d}.cert")
    open(p, "wb").write(b)
    r = subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), "verify.py"), "--sample", "0", "--seed", "1"] + extra + [p],
                       capture_output=True, text=True)
    why = [l for l in r.stdout.splitlines() if l.startswith(("REFUSED", "MISMATCH"))]
    ok = r.returncode == want
    fails += not ok
    print(f"{'ok  ' if ok else 'FAIL'} exit {r.returncode} (want {want}) {name}: {why[0] if why else ''}"
          + (f" [+{len(why) - 1} more]" if len(why) > 1 else ""))
print(f"{len(cases) - fails}/{len(cases)} cases as expected")
sys.exit(1 if fails else 0)
