#!/usr/bin/env bash
# Builds the public perft engines Deep Perft is measured against, each with its own
# optimisation flags, into $ANCHORS/bin:
#   egaroucid -perft <depth> 1             Egaroucid for Console (Bik's convention)
#   edax-perft <depth> [<table bits>]      Edax's perft.c, one depth (2^bits entries of 72 B)
#   darkhorse <depth>                      DarkHorse's perft, one depth, no table
#   darkhorse-table <depth> <size>         its last table perft (size as "2147mb")
# The caller fetches the repositories and passes their git dirs:
#   EGAROUCID_GIT=... EDAX_GIT=... DARKHORSE_GIT=... bench/anchors/build.sh
# Needs g++ and clang (Edax's Makefile defaults to clang).
# MARCH (default native) is the -march every build gets. With native they are tuned to
# the CPU they run on (-mtune=native too); with anything else (e.g. MARCH=x86-64-v3 for
# binaries that run on every AVX2 machine) -mtune is left out and Egaroucid does not get
# its AVX-512 switch.
set -euo pipefail
A=${ANCHORS:-${TMPDIR:-/tmp}/anchors}
march=${MARCH:-native}
if [ "$march" = native ]; then tune=-mtune=native; else tune=; fi
: "${EGAROUCID_GIT:?git dir of Nyanyan/Egaroucid}" "${EDAX_GIT:?git dir of abulmo/edax-reversi}"
: "${DARKHORSE_GIT:?git dir of CheckersGuy/DarkHorse}"
# DarkHorse dropped its perft table after this commit (the next one broke its index).
DARKHORSE_TABLE_REV=${DARKHORSE_TABLE_REV:-ce69ea6}
mkdir -p "$A/bin" "$A/drivers"

# extract GIT REV DEST PATH...: file by file, as the mirrors lack some large blobs
# that `git archive` stops at.
extract() {
  local git=$1 rev=$2 dest=$3; shift 3
  rm -rf "$dest"
  git --git-dir="$git" ls-tree -r "$rev" -- "$@" | while read -r _ type hash path; do
    [ "$type" = blob ] || continue
    mkdir -p "$dest/$(dirname "$path")"
    git --git-dir="$git" cat-file blob "$hash" >"$dest/$path"
  done
}

# Egaroucid: its CMake flags for the console (-O2 -march=native -mtune=native), with its
# AMD switch only on an AMD CPU and its AVX-512 switch only for a native build where the
# CPU has AVX-512 (its fastest variant there; on a CPU without it the switch does not
# compile). GCC 12 needs <algorithm> for std::clamp.
extract "$EGAROUCID_GIT" HEAD "$A/egaroucid" src/engine src/console src/Egaroucid_for_Console.cpp
avx512=
if [ "$march" = native ] && grep -qw avx512vl /proc/cpuinfo; then avx512=-DHAS_AVX512; fi
amd=$(grep -qw AuthenticAMD /proc/cpuinfo && echo -DHAS_AMD_PROCESSOR || true)
g++ -w -O2 -march="$march" $tune -pthread -std=c++20 -include algorithm $avx512 $amd \
  "$A/egaroucid/src/Egaroucid_for_Console.cpp" -o "$A/bin/egaroucid"

# Edax: the clang flags of its Makefile (`make build ARCH=native`, -march from MARCH). Its
# `perft` and `count games` commands count every depth from 1 up (and rebuild the table at
# each), so this driver calls perft.c's count_game / quick_count_game once. Edax drops
# game-over leaves: moves + passes + wins + draws + losses is Bik's full-depth count.
extract "$EDAX_GIT" HEAD "$A/edax" src
cat >"$A/drivers/edax_perft.c" <<'EOF'
#define main edax_main
#include "all.c"
#undef main
int main(int argc, char **argv)
{
	const int depth = atoi(argv[1]), bits = argc > 2 ? atoi(argv[2]) : 0;
	GameStatistics s = GAME_STATISTICS_INIT;
	GameHashTable hash;
	Board board;
	board_init(&board);
	if (bits) {
		gamehash_init(&hash, bits);
		quick_count_game(&hash, &board, depth, &s);
	} else count_game(&board, depth, &s);
	printf("full_depth %" PRIu64 " (moves+passes %" PRIu64 ", game over %" PRIu64 ")\n",
	       s.n_moves + s.n_passes + s.n_wins + s.n_draws + s.n_losses, s.n_moves + s.n_passes,
	       s.n_wins + s.n_draws + s.n_losses);
	return 0;
}
EOF
clang -w -std=c17 -D_GNU_SOURCE=1 -O3 -flto -ffast-math -fomit-frame-pointer -DNDEBUG -march="$march" \
  -I"$A/edax/src" "$A/drivers/edax_perft.c" -o "$A/bin/edax-perft" -lm

# DarkHorse: the flags of its CMakeLists (-O3 -march=native -funroll-loops -flto, -march
# from MARCH), the sources of its perft_check target, and drivers that count one depth
# (perft_check counts every depth from 1 up and has a fixed 4000mb table).
cat >"$A/drivers/darkhorse.cpp" <<'EOF'
#include "Perft.h"
#include <cstdio>
#include <cstdlib>
int main(int, char **argv) {
  Board board;
  board = Position::get_start_position();
  std::printf("%llu\n", (unsigned long long)Perft::perft_check(board, std::atoi(argv[1])));
}
EOF
cat >"$A/drivers/darkhorse-table.cpp" <<'EOF'
#include "Perft.h"
#include <cstdio>
#include <cstdlib>
int main(int, char **argv) {
  Zobrist::init_zobrist_keys();
  Perft::table.set_capacity(std::string(argv[2]));
  Board board;
  board = Position::get_start_position();
  PerftCallBack call_back;
  Perft::perft_check(board.get_position(), std::atoi(argv[1]), call_back);
  std::printf("%llu\n", (unsigned long long)call_back.num_nodes);
}
EOF
darkhorse() { # REV NAME
  local src="$A/darkhorse-$1/Checkers/CheckerEngineX"
  extract "$DARKHORSE_GIT" "$1" "$A/darkhorse-$1" Checkers/CheckerEngineX
  g++ -w -std=c++20 -O3 -march="$march" $tune -funroll-loops -flto -pthread -I"$src" "$A/drivers/$2.cpp" \
    $(ls "$src"/*.cpp | grep -vE '/(main|test|CheckerBoard|Endgame|helper|Simd)\.cpp$') -o "$A/bin/$2"
}
darkhorse HEAD darkhorse
darkhorse "$DARKHORSE_TABLE_REV" darkhorse-table

ls -l "$A/bin"
