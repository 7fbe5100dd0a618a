#!/bin/sh
# Builds ChristopheSteininger/c4's `c4` (solves the empty board strongly: outcome and the move
# on which perfect play ends) once per board size, for `gamesolver-bench c4-boards --peer DIR`.
# c4 takes the board size, threads and table size at compile time (src/solver/settings.h), so
# each size gets its own copy of the sources and its own binary: DIR/WxH/c4.
#
#   build_c4.sh SRC DIR THREADS TABLE_ENTRIES WxH [WxH ...]
#
# SRC: a checkout of https://github.com/ChristopheSteininger/c4 (a work tree, or a bare git
# directory: then HEAD is exported). TABLE_ENTRIES: an odd number, a prime for fewer
# collisions (c4's settings.h lists 8388617 = 64 MB, 134217757 = 1 GB). Needs g++ with C++20.
# Nothing of c4 is copied into this repository: the script only builds it outside.
set -eu
[ $# -ge 5 ] || { echo "usage: build_c4.sh SRC DIR THREADS TABLE_ENTRIES WxH [WxH ...]" >&2; exit 2; }
src=$1; dir=$2; threads=$3; entries=$4; shift 4
mkdir -p "$dir"
for board in "$@"; do
    w=${board%x*}; h=${board#*x}
    out="$dir/$board"
    if [ -x "$out/c4" ]; then continue; fi
    rm -rf "$out"; mkdir -p "$out/src"
    if [ -d "$src/.git" ] || [ -f "$src/src/c4.cpp" ]; then
        cp -r "$src/src" "$out/"
    else
        git --git-dir="$src" archive HEAD src | tar -x -C "$out"
    fi
    s="$out/src/solver/settings.h"
    sed -i -e "s/BOARD_WIDTH = [0-9]*;/BOARD_WIDTH = $w;/" \
        -e "s/BOARD_HEIGHT = [0-9]*;/BOARD_HEIGHT = $h;/" \
        -e "s/NUM_THREADS = [0-9]*;/NUM_THREADS = $threads;/" \
        -e "s/NUM_TABLE_ENTRIES = [0-9]*;/NUM_TABLE_ENTRIES = $entries;/" "$s"
    grep -q "BOARD_WIDTH = $w;" "$s" && grep -q "BOARD_HEIGHT = $h;" "$s" \
        || { echo "build_c4.sh: cannot set the board size in $s" >&2; exit 1; }
    g++ -std=c++20 -O3 -DNDEBUG -march=native -pthread -o "$out/c4" \
        "$out/src/c4.cpp" $(find "$out/src/solver" -name '*.cpp')
    echo "built $out/c4"
done
