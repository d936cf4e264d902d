#!/usr/bin/env bash
# Deep Perft's chess generator side by side with two public perft programs
# (issue 11): ellxor/perft and Gigantua, built here from their git
# repositories with -march=native as their READMEs intend (MARCH overrides
# it). Their code is only extracted into WORK, never into this repository.
#
#   bench/chess-anchors.sh ELLXOR_GIT_DIR GIGANTUA_GIT_DIR PERFT_BINARY [WORK]
#
# Env: RUNS (3), CPU (core every run is pinned to, 1), CXX (g++),
#      MARCH (-march of both builds, native; e.g. x86-64-v3 for binaries that
#      run on every AVX2 machine; both need BMI2, which v3 has),
#      BUILD_ONLY=1 (stop after building), REBUILD=1 (rebuild existing bins).
# Every case runs one thread, no table, and the programs alternate run by run
# (ours, ellxor, Gigantua, ours, ...). Each run's leaf count is checked.
# Prints one line per run and a table of medians (wall s, leaves/s).
set -euo pipefail
ellxor_git=$(realpath "$1")
giga_git=$(realpath "$2")
perft=$(realpath "$3")
work=$(realpath -m "${4:-/tmp/chess-anchors}")
runs=${RUNS:-3}
cpu=${CPU:-1}
cxx=${CXX:-g++}
march=${MARCH:-native}
mkdir -p "$work/src" "$work/bin"

start_fen='rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1'
kiwi_fen='r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1'
# name, FEN, depth, expected leaves
cases=(
  "start|$start_fen|7|3195901860"
  "kiwipete|$kiwi_fen|5|193690690"
  "kiwipete|$kiwi_fen|6|8031647685"
)

# Writes every blob of HEAD that the git dir holds; reports the ones it lacks
# (mirrors may leave their largest files out, which makes `git archive` fail).
extract() {
  local git_dir=$1 dest=$2 file
  rm -rf "$dest" && mkdir -p "$dest"
  git --git-dir="$git_dir" ls-tree -r --name-only HEAD | while read -r file; do
    if git --git-dir="$git_dir" cat-file -e "HEAD:$file" 2>/dev/null; then
      mkdir -p "$dest/$(dirname "$file")"
      git --git-dir="$git_dir" show "HEAD:$file" >"$dest/$file"
    else
      echo "missing in $git_dir: $file" >&2
    fi
  done
}

# Gigantua's Movemap.hpp (the lookup tables) is absent from the mirror this
# was first run on. This stand-in is written from how Chess_Base.hpp and
# Movelist.hpp call it: PEXT tables for sliders (Lookup_Pext, the variant
# Gigantua selects), leaper arrays, and between/behind masks.
write_movemap_stand_in() {
  cat >"$1" <<'EOF'
#pragma once
#include <cstdint>
#include <immintrin.h>

#define _ForceInline __attribute__((always_inline)) inline
#define _Inline inline
#define _NoInline __attribute__((noinline))
#define _Compiletime __attribute__((always_inline)) static constexpr
#define Bitcount(X) __builtin_popcountll(X)

namespace Chess_Lookup {
namespace Detail {
inline uint64_t ray_walk(int sq, uint64_t occ, const int (*dirs)[2], bool stop_at_blocker) {
    uint64_t out = 0;
    for (int d = 0; d < 4; d++) {
        int f = sq % 8 + dirs[d][0], r = sq / 8 + dirs[d][1];
        while (f >= 0 && f < 8 && r >= 0 && r < 8) {
            uint64_t b = 1ull << (r * 8 + f);
            out |= b;
            if (stop_at_blocker && (occ & b)) break;
            f += dirs[d][0]; r += dirs[d][1];
        }
    }
    return out;
}
constexpr int RookDirs[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
constexpr int BishopDirs[4][2] = {{1, 1}, {-1, 1}, {1, -1}, {-1, -1}};

struct Tables {
    uint64_t rook_mask[64], bishop_mask[64];  // relevant occupancy (edges cut)
    uint64_t rook_ray[64], bishop_ray[64];    // full rays
    uint64_t rook_off[64], bishop_off[64];
    uint64_t knight[64], king[64];
    uint64_t pin_between[64 * 64], check_between[64 * 64];
    uint64_t slider[102400 + 5248];
    Tables() {
        uint64_t off = 0;
        for (int sq = 0; sq < 64; sq++) {
            rook_ray[sq] = ray_walk(sq, 0, RookDirs, false);
            bishop_ray[sq] = ray_walk(sq, 0, BishopDirs, false);
            uint64_t file = 0x0101010101010101ull << (sq % 8), rank = 0xFFull << (sq / 8 * 8);
            uint64_t edges = (0x8181818181818181ull & ~file) | (0xFF000000000000FFull & ~rank);
            rook_mask[sq] = rook_ray[sq] & ~edges;
            bishop_mask[sq] = bishop_ray[sq] & ~0xFF818181818181FFull;
            for (int pass = 0; pass < 2; pass++) {
                uint64_t mask = pass ? bishop_mask[sq] : rook_mask[sq];
                (pass ? bishop_off : rook_off)[sq] = off;
                uint64_t subset = 0;
                do {
                    slider[off + _pext_u64(subset, mask)] = ray_walk(sq, subset, pass ? BishopDirs : RookDirs, true);
                    subset = (subset - mask) & mask;
                } while (subset);
                off += 1ull << __builtin_popcountll(mask);
            }
            knight[sq] = king[sq] = 0;
            for (int df = -2; df <= 2; df++) for (int dr = -2; dr <= 2; dr++) {
                int f = sq % 8 + df, r = sq / 8 + dr;
                if (f < 0 || f > 7 || r < 0 || r > 7 || (df == 0 && dr == 0)) continue;
                uint64_t b = 1ull << (r * 8 + f);
                if (df * df + dr * dr == 5) knight[sq] |= b;
                if (df >= -1 && df <= 1 && dr >= -1 && dr <= 1) king[sq] |= b;
            }
        }
        // pin_between[k*64+e]: from the king (excluded) to e (included) on a common line.
        // check_between[k*64+e]: the square just behind the king, seen from e.
        for (int k = 0; k < 64; k++) for (int e = 0; e < 64; e++) {
            pin_between[k * 64 + e] = check_between[k * 64 + e] = 0;
            if (k == e) continue;
            int df = e % 8 - k % 8, dr = e / 8 - k / 8;
            if (!(df == 0 || dr == 0 || df == dr || df == -dr)) continue;
            int sf = (df > 0) - (df < 0), sr = (dr > 0) - (dr < 0);
            uint64_t path = 0;
            for (int f = k % 8 + sf, r = k / 8 + sr;; f += sf, r += sr) {
                path |= 1ull << (r * 8 + f);
                if (r * 8 + f == e) break;
            }
            pin_between[k * 64 + e] = path;
            int bf = k % 8 - sf, br = k / 8 - sr;
            if (bf >= 0 && bf < 8 && br >= 0 && br < 8) check_between[k * 64 + e] = 1ull << (br * 8 + bf);
        }
    }
};
inline const Tables T;
}

inline const uint64_t* const PinBetween = Detail::T.pin_between;
inline const uint64_t* const CheckBetween = Detail::T.check_between;
inline const uint64_t* const RookMask = Detail::T.rook_ray;
inline const uint64_t* const BishopMask = Detail::T.bishop_ray;

namespace Lookup_Pext {
_ForceInline uint64_t Knight(uint64_t sq) { return Detail::T.knight[sq]; }
_ForceInline uint64_t King(uint64_t sq) { return Detail::T.king[sq]; }
_ForceInline uint64_t Rook(uint64_t sq, uint64_t occ) { return Detail::T.slider[Detail::T.rook_off[sq] + _pext_u64(occ, Detail::T.rook_mask[sq])]; }
_ForceInline uint64_t Bishop(uint64_t sq, uint64_t occ) { return Detail::T.slider[Detail::T.bishop_off[sq] + _pext_u64(occ, Detail::T.bishop_mask[sq])]; }
_ForceInline uint64_t Queen(uint64_t sq, uint64_t occ) { return Rook(sq, occ) | Bishop(sq, occ); }
// Attacks once the first blockers are lifted: they reach a pinner behind a piece.
_ForceInline uint64_t Rook_Xray(uint64_t sq, uint64_t occ) { return Rook(sq, occ & ~Rook(sq, occ)); }
_ForceInline uint64_t Bishop_Xray(uint64_t sq, uint64_t occ) { return Bishop(sq, occ & ~Bishop(sq, occ)); }
}
}
EOF
}

ellxor_build="$cxx -std=c++20 -O3 -flto -fno-exceptions -fno-rtti -march=$march -o $work/bin/ellxor src/unity_build.cc"
giga_build="$cxx Gigantua.cpp -std=c++2a -march=$march -O3 -fomit-frame-pointer -foptimize-sibling-calls -o $work/bin/gigantua"

if [ ! -x "$work/bin/ellxor" ] || [ -n "${REBUILD:-}" ]; then
  extract "$ellxor_git" "$work/src/ellxor"
  (cd "$work/src/ellxor" && $ellxor_build)
fi
if [ ! -x "$work/bin/gigantua" ] || [ -n "${REBUILD:-}" ]; then
  extract "$giga_git" "$work/src/gigantua"
  [ -f "$work/src/gigantua/Gigantua/Movemap.hpp" ] ||
    { echo "Gigantua: using the Movemap.hpp stand-in" >&2; write_movemap_stand_in "$work/src/gigantua/Gigantua/Movemap.hpp"; }
  (cd "$work/src/gigantua/Gigantua" && $giga_build)  # about 8 CPU minutes
fi

echo "ellxor   $(git --git-dir="$ellxor_git" rev-parse HEAD): $ellxor_build"
echo "Gigantua $(git --git-dir="$giga_git" rev-parse HEAD): $giga_build"
echo "compiler: $($cxx --version | head -1); ours: $perft"
[ -n "${BUILD_ONLY:-}" ] && exit 0

# Runs one program on one case, pinned to one core; prints "wall_s user_s".
# ellxor starts one thread per online CPU, so pinning makes it one core.
# Gigantua's 3-argument form also counts every lower depth, so it gets its
# 4-argument form (FEN depth expected), which counts one depth and exits 0
# only when the count matches.
run_one() {
  local prog=$1 fen=$2 depth=$3 expected=$4 out t0 t1 count
  out=$(mktemp)
  t0=$(date +%s%N)
  case $prog in
    ours)
      /usr/bin/time -f "%U" -o "$out.time" taskset -c "$cpu" \
        "$perft" run --game chess --position "$fen" --depth "$depth" --raw >"$out"
      count=$(awk '/^total:/ { print $2 }' "$out") ;;
    ellxor)
      /usr/bin/time -f "%U" -o "$out.time" taskset -c "$cpu" \
        "$work/bin/ellxor" "$fen" "$depth" >"$out"
      count=$(awk '/^Result:/ { print $2 }' "$out") ;;
    gigantua)
      if /usr/bin/time -f "%U" -o "$out.time" taskset -c "$cpu" \
        "$work/bin/gigantua" "$fen" "$depth" "$expected" >"$out" </dev/null; then
        count=$expected
      else count="mismatch(rc $?)"; fi ;;
  esac
  t1=$(date +%s%N)
  if [ "$count" != "$expected" ]; then
    echo "$prog: $count leaves, expected $expected" >&2
    exit 1
  fi
  echo "$(( (t1 - t0) / 1000000 ))e-3 $(tail -1 "$out.time")"
  rm -f "$out" "$out.time"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

results=$(mktemp)
for spec in "${cases[@]}"; do
  IFS='|' read -r name fen depth expected <<<"$spec"
  for run in $(seq "$runs"); do
    for prog in ours ellxor gigantua; do
      read -r wall user < <(run_one "$prog" "$fen" "$depth" "$expected")
      echo "$name d$depth run $run $prog: wall $wall s, user $user s"
      echo "$name $depth $expected $prog $wall $user" >>"$results"
    done
  done
done

echo
echo "| position | depth | leaves | program | median wall s | median user s | leaves/s | ours / it |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for spec in "${cases[@]}"; do
  IFS='|' read -r name fen depth expected <<<"$spec"
  ours_wall=$(awk -v n="$name" -v d="$depth" '$1 == n && $2 == d && $4 == "ours" { print $5 }' "$results" | median)
  for prog in ours ellxor gigantua; do
    wall=$(awk -v n="$name" -v d="$depth" -v p="$prog" '$1 == n && $2 == d && $4 == p { print $5 }' "$results" | median)
    user=$(awk -v n="$name" -v d="$depth" -v p="$prog" '$1 == n && $2 == d && $4 == p { print $6 }' "$results" | median)
    awk -v n="$name" -v d="$depth" -v e="$expected" -v p="$prog" -v w="$wall" -v u="$user" -v o="$ours_wall" \
      'BEGIN { printf "| %s | %s | %s | %s | %.3f | %.2f | %.0f M | %.2fx |\n", n, d, e, p, w, u, e / w / 1e6, w / o }'
  done
done
rm -f "$results"
