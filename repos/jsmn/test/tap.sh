#!/bin/sh
# tap.sh - jsmn's tests (the Makefile's `test` target) as TAP, one test per
# build configuration of test/tests.c, each compiled and run in its own
# process; a configuration passes when its program exits 0.
#
# Results are judged here, from the compiler's and the program's exit
# status: the stream goes to $RL_RESULT_FILE when it is set (else stdout),
# and the test programs run without that variable, so what they print never
# reaches it. Exit status 1 when a test failed.
cd "$(dirname "$0")/.." || exit 2
CC="${CC:-cc}"
mkdir -p build
n=0
failed=0
tap=""
t() { # NAME FLAGS...
    name=$1
    shift
    n=$((n + 1))
    exe=build/test_$name
    if $CC "$@" -Wall test/tests.c -o "$exe" 2>"$exe.log" && env -u RL_RESULT_FILE "$exe" >"$exe.out" 2>&1; then
        tap="${tap}ok $n - $name
"
    else
        failed=1
        tap="${tap}not ok $n - $name
"
        head -20 "$exe.log" "$exe.out" | sed 's/^/# /'
    fi
}
t default
t strict -DJSMN_STRICT=1
t links -DJSMN_PARENT_LINKS=1
t strict_links -DJSMN_STRICT=1 -DJSMN_PARENT_LINKS=1
if [ -n "${RL_RESULT_FILE:-}" ]; then
    printf '1..%d\n%s' "$n" "$tap" >"$RL_RESULT_FILE"
else
    printf '1..%d\n%s' "$n" "$tap"
fi
exit $failed
