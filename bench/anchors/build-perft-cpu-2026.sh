#!/usr/bin/env bash
# Builds perft_cpu_2026 (Ankan Banerjee's chess perft with a transposition table, MIT),
# the chess table anchor, into $ANCHORS/bin/perft_cpu:
#   bench/anchors/build-perft-cpu-2026.sh TARBALL
# TARBALL is a .tar.gz holding perft_cpu_2026/ (its sources and CMakeLists.txt) and
# perft_cpu_2026/compat_gcc.h, which maps the MSVC keywords its sources use onto GCC.
# Built with its own CMake (Release: -O3 -flto -mpopcnt -mbmi) plus -march from MARCH
# (default native; e.g. MARCH=x86-64-v3 for a binary that runs on every AVX2 machine).
# Needs cmake and g++. Runs as (counts depths 1..DEPTH, prints each count and time):
#   perft_cpu "<fen>" DEPTH -nott        no table
#   perft_cpu "<fen>" DEPTH -htt MB      with a table of MB megabytes
set -euo pipefail
tarball=$(realpath "${1:?usage: build-perft-cpu-2026.sh TARBALL}")
A=${ANCHORS:-${TMPDIR:-/tmp}/anchors}
march=${MARCH:-native}
mkdir -p "$A/bin"
rm -rf "$A/perft_cpu_2026"
tar xzf "$tarball" -C "$A"
cd "$A/perft_cpu_2026"
cmake -B build -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS="-march=$march -fpermissive -include $PWD/compat_gcc.h"
cmake --build build -j"${JOBS:-2}"
cp build/perft_cpu "$A/bin/perft_cpu"
ls -l "$A/bin/perft_cpu"
