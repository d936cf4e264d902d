#!/bin/sh
# Adapter for perftree (https://github.com/agausmann/perftree), which runs
#   ./perftree.sh "$depth" "$fen" "$moves"
# and reads Stockfish's divide format. Use it as: perftree cli/perftree.sh
# PERFT names the perft binary (default: perft on the PATH).
exec "${PERFT:-perft}" perftree "$@"
