#!/bin/sh
# tap.sh - inih's baseline tests (tests/unittest.sh) as TAP, one test per
# build configuration: each is compiled, run in its own process from tests/,
# and passes when its output equals tests/baseline_NAME.txt.
#
# Results are judged here, from the compiler's and cmp's exit status: the
# stream goes to $RL_RESULT_FILE when it is set (else stdout), and the test
# programs run without that variable, so what they print never reaches it.
# Exit status 1 when a test failed.
cd "$(dirname "$0")" || exit 2
CC="${CC:-cc} -Wall"
mkdir -p ../build
n=0
failed=0
tap=""
t() { # NAME SOURCE FLAGS...
    name=$1 src=$2
    shift 2
    n=$((n + 1))
    exe=../build/unittest_$name
    if $CC "$@" ../ini.c "$src" -o "$exe" 2>"$exe.log" &&
        env -u RL_RESULT_FILE "$exe" >"$exe.out" 2>>"$exe.log" &&
        cmp -s "$exe.out" "baseline_$name.txt"; then
        tap="${tap}ok $n - $name
"
    else
        failed=1
        tap="${tap}not ok $n - $name
"
        diff "baseline_$name.txt" "$exe.out" | head -20 | sed 's/^/# /'
    fi
}
t multi unittest.c
t multi_max_line unittest.c -DINI_MAX_LINE=20
t single unittest.c -DINI_ALLOW_MULTILINE=0
t disallow_inline_comments unittest.c -DINI_ALLOW_INLINE_COMMENTS=0
t stop_on_first_error unittest.c -DINI_STOP_ON_FIRST_ERROR=1
t handler_lineno unittest.c -DINI_HANDLER_LINENO=1
t string unittest_string.c -DINI_MAX_LINE=20
t heap unittest.c -DINI_USE_STACK=0
t heap_max_line unittest.c -DINI_USE_STACK=0 -DINI_MAX_LINE=20 -DINI_INITIAL_ALLOC=20
t heap_realloc unittest.c -DINI_USE_STACK=0 -DINI_ALLOW_REALLOC=1 -DINI_INITIAL_ALLOC=5
t heap_realloc_max_line unittest.c -DINI_USE_STACK=0 -DINI_MAX_LINE=20 -DINI_ALLOW_REALLOC=1 -DINI_INITIAL_ALLOC=5
t heap_string unittest_string.c -DINI_USE_STACK=0 -DINI_MAX_LINE=20 -DINI_INITIAL_ALLOC=20
t call_handler_on_new_section unittest.c -DINI_CALL_HANDLER_ON_NEW_SECTION=1
t allow_no_value unittest.c -DINI_ALLOW_NO_VALUE=1
t alloc unittest_alloc.c -DINI_CUSTOM_ALLOCATOR=1 -DINI_USE_STACK=0 -DINI_ALLOW_REALLOC=1 -DINI_INITIAL_ALLOC=12
if [ -n "${RL_RESULT_FILE:-}" ]; then
    printf '1..%d\n%s' "$n" "$tap" >"$RL_RESULT_FILE"
else
    printf '1..%d\n%s' "$n" "$tap"
fi
exit $failed
