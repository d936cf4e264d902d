/* Independent Reversi perft for the stranger's certificate verifier.
 * Written from general Reversi rules and docs/certificate.md / conventions.md only.
 *
 * stdin: one job per line: "<mover_hex> <other_hex> <depth> <conv>"
 *   mover/other: u64 bitboards (bit n = square n, a1 = 0, h1 = 7, a2 = 8 ... h8 = 63)
 *   conv: 1 = Bik's (game over above full depth counts one leaf; "higher" if >= 2 plies above)
 *         2 = OEIS A124004 (game over above full depth counts nothing)
 *         3 = both at once: prints "<full> <g1> <g2> <seconds>" (table kept across jobs)
 * stdout: "<all> <higher> <seconds>" per line.
 * Options: -t BITS  transposition table of 2^BITS entries (0 = none; default 22)
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

typedef uint64_t u64;
typedef unsigned __int128 u128;

static int CONV = 1;

static inline u64 moves_of(u64 P, u64 O) {
    u64 empty = ~(P | O);
    u64 m = 0, t, mo;
    /* E/W: shift by 1, O without a/h files */
    mo = O & 0x7E7E7E7E7E7E7E7EULL;
#define DIR(SH, MASK)                                         \
    t = MASK & (P SH); t |= MASK & (t SH); t |= MASK & (t SH); \
    t |= MASK & (t SH); t |= MASK & (t SH); t |= MASK & (t SH); \
    m |= (t SH);
    DIR(<< 1, mo) DIR(>> 1, mo)
    DIR(<< 8, O) DIR(>> 8, O)
    DIR(<< 7, mo) DIR(>> 7, mo)
    DIR(<< 9, mo) DIR(>> 9, mo)
#undef DIR
    return m & empty;
}

static const int DX[8] = {1, -1, 0, 0, 1, -1, 1, -1};
static const int DY[8] = {0, 0, 1, -1, 1, -1, -1, 1};

static inline u64 flips_of(u64 P, u64 O, int sq) {
    u64 f = 0;
    int x0 = sq & 7, y0 = sq >> 3;
    for (int d = 0; d < 8; d++) {
        u64 line = 0;
        int x = x0 + DX[d], y = y0 + DY[d];
        while (x >= 0 && x < 8 && y >= 0 && y < 8) {
            u64 b = 1ULL << (y * 8 + x);
            if (O & b) { line |= b; }
            else { if (P & b) f |= line; break; }
            x += DX[d]; y += DY[d];
        }
    }
    return f;
}

typedef struct { u64 P, O; u64 all, higher; int depth; } Entry;
static Entry *TT = NULL;
static u64 TTMASK = 0;

static inline u64 hash2(u64 P, u64 O) {
    u64 h = P * 0x9E3779B97F4A7C15ULL ^ (O + 0x632BE59BD9B4E019ULL) * 0xC2B2AE3D27D4EB4FULL;
    h ^= h >> 29; h *= 0xBF58476D1CE4E5B9ULL; h ^= h >> 32;
    return h;
}

/* returns all leaves; *hi accumulates higher */
static void perft(u64 P, u64 O, int d, u64 *all, u64 *hi) {
    if (d == 0) { *all += 1; return; }
    u64 m = moves_of(P, O);
    if (m == 0) {
        if (moves_of(O, P) == 0) {           /* game over above full depth */
            if (CONV == 1) { *all += 1; if (d >= 2) *hi += 1; }
            return;
        }
        perft(O, P, d - 1, all, hi);         /* pass is a ply */
        return;
    }
    if (d == 1) { *all += (u64)__builtin_popcountll(m); return; }
    Entry *e = NULL;
    if (TT && d >= 3) {
        e = &TT[(hash2(P, O) + (u64)d * 0x9E3779B97F4A7C15ULL) & TTMASK];
        if (e->P == P && e->O == O && e->depth == d) { *all += e->all; *hi += e->higher; return; }
    }
    u64 a = 0, h = 0;
    while (m) {
        int sq = __builtin_ctzll(m); m &= m - 1;
        u64 f = flips_of(P, O, sq);
        u64 nP = P | f | (1ULL << sq), nO = O & ~f;
        perft(nO, nP, d - 1, &a, &h);
    }
    if (e) { e->P = P; e->O = O; e->depth = d; e->all = a; e->higher = h; }
    *all += a; *hi += h;
}

/* Both conventions in one walk: full-depth leaves, game overs at 1 ply above full depth (g1),
 * game overs 2+ plies above (g2).  Bik: all = full + g1 + g2, higher = g2.  OEIS: all = full. */
typedef struct { u64 P, O; u64 full, g1, g2; int depth; } Entry3;
static Entry3 *TT3 = NULL;
static void perft3(u64 P, u64 O, int d, u64 *full, u64 *g1, u64 *g2) {
    if (d == 0) { *full += 1; return; }
    u64 m = moves_of(P, O);
    if (m == 0) {
        if (moves_of(O, P) == 0) { if (d == 1) *g1 += 1; else *g2 += 1; return; }
        perft3(O, P, d - 1, full, g1, g2);
        return;
    }
    if (d == 1) { *full += (u64)__builtin_popcountll(m); return; }
    Entry3 *e = NULL;
    if (TT3 && d >= 3) {
        e = &TT3[(hash2(P, O) + (u64)d * 0x9E3779B97F4A7C15ULL) & TTMASK];
        if (e->P == P && e->O == O && e->depth == d) { *full += e->full; *g1 += e->g1; *g2 += e->g2; return; }
    }
    u64 a = 0, b = 0, c = 0;
    while (m) {
        int sq = __builtin_ctzll(m); m &= m - 1;
        u64 f = flips_of(P, O, sq);
        perft3(O & ~f, P | f | (1ULL << sq), d - 1, &a, &b, &c);
    }
    if (e) { e->P = P; e->O = O; e->depth = d; e->full = a; e->g1 = b; e->g2 = c; }
    *full += a; *g1 += b; *g2 += c;
}

int main(int argc, char **argv) {
    int bits = 22;
    for (int i = 1; i < argc; i++) if (!strcmp(argv[i], "-t") && i + 1 < argc) bits = atoi(argv[++i]);
    char line[512];
    while (fgets(line, sizeof line, stdin)) {
        u64 P, O; int d, conv;
        if (sscanf(line, "%lx %lx %d %d", &P, &O, &d, &conv) != 4) continue;
        if (P & O) { printf("ERROR overlapping\n"); fflush(stdout); continue; }
        CONV = conv;
        if (conv == 3) {   /* "<full> <g1> <g2> <seconds>" */
            if (bits > 0 && !TT3) { TT3 = calloc((size_t)1 << bits, sizeof(Entry3)); TTMASK = ((u64)1 << bits) - 1; }
            struct timespec t0, t1; clock_gettime(CLOCK_MONOTONIC, &t0);
            u64 full = 0, g1 = 0, g2 = 0;
            perft3(P, O, d, &full, &g1, &g2);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            printf("%lu %lu %lu %.3f\n", full, g1, g2, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
            fflush(stdout);
            continue;
        }
        if (bits > 0) {
            if (!TT) { TT = calloc((size_t)1 << bits, sizeof(Entry)); TTMASK = ((u64)1 << bits) - 1; }
            memset(TT, 0, ((size_t)1 << bits) * sizeof(Entry)); /* conv may change between jobs */
        }
        struct timespec t0, t1; clock_gettime(CLOCK_MONOTONIC, &t0);
        u64 all = 0, hi = 0;
        perft(P, O, d, &all, &hi);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        printf("%lu %lu %.3f\n", all, hi, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
        fflush(stdout);
    }
    return 0;
}
