#!/bin/sh
# spawn-ab.sh - spawn cost of the sandbox at two git revisions, measured in
# one process (scripts/spawn_ab.c): on a shared machine, figures from two
# separate bench_spawn runs differ more with the load than with the code.
#
#   scripts/spawn-ab.sh REV_A REV_B [PAIRS]     e.g. main HEAD 400
#
# Builds common/ and sandbox/ of each revision as a shared library in a
# temporary directory (nothing in the checkout changes). Run it as the
# harness runs (root, for the idmapped work dir); NICE=-5 to lower the
# scheduling noise a little.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 REV_A REV_B [PAIRS]" >&2; exit 2; }
top=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d /tmp/rl-spawn-ab-build-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
flags="-O2 -fPIC -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $(pkg-config --cflags libseccomp libcjson)"
libs="$(pkg-config --libs libseccomp libcjson) -lpthread"
for side in a b; do
    if [ "$side" = a ]; then rev=$1; else rev=$2; fi
    mkdir -p "$tmp/$side"
    git -C "$top" archive "$rev" common sandbox | tar -x -C "$tmp/$side"
    (cd "$tmp/$side" && cc $flags -I. -shared common/*.c sandbox/*.c -o "$tmp/lib-$side.so" $libs)
done
cc -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$top" "$top/scripts/spawn_ab.c" -o "$tmp/spawn_ab" -ldl
echo "A = $1 ($(git -C "$top" rev-parse --short "$1")), B = $2 ($(git -C "$top" rev-parse --short "$2"))"
nice -n "${NICE:-0}" "$tmp/spawn_ab" "$tmp/lib-a.so" "$tmp/lib-b.so" "${3:-400}" |
    sed -e "s|$tmp/lib-a.so|A|" -e "s|$tmp/lib-b.so|B|"
