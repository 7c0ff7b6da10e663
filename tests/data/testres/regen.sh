#!/bin/sh
# regen.sh - regenerates the real test-runner outputs used by
# tests/test_testres.c. Run from the repository top: sh tests/data/testres/regen.sh
# Check fixtures: a real Check program run with CK_VERBOSE and CK_NORMAL.
# JUnit fixture: Debian's pytest (/usr/bin/python3) with --junitxml.
# TAP fixture: Perl's Test::More.
set -e
d=tests/data/testres
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=c11 -D_GNU_SOURCE -o "$tmp/check_sample" $d/check_sample.c $(pkg-config --cflags --libs check)
(cd "$tmp" && CK_VERBOSITY=verbose CK_XML_LOG_FILE_NAME=log.xml ./check_sample > out.txt 2>&1 || true)
sed "s|$tmp/||" "$tmp/out.txt" > $d/check_verbose.txt
# The XML log of the same run; its time stamps vary from run to run.
sed -e "s|$tmp/||g" -e 's|<datetime>[^<]*</datetime>|<datetime>2024-01-01 00:00:00</datetime>|' \
    -e 's|<duration>[^<]*</duration>|<duration>0.000100</duration>|' "$tmp/log.xml" > $d/check_log.xml
(cd "$tmp" && CK_VERBOSITY=normal ./check_sample > out.txt 2>&1 || true)
sed "s|$tmp/||" "$tmp/out.txt" > $d/check_normal.txt
cp -r $d/pytest_sample "$tmp/py"
(cd "$tmp/py" && /usr/bin/python3 -m pytest -q -p no:cacheprovider --junitxml=junit.xml test_sample.py > /dev/null 2>&1 || true)
# Timestamps and host names vary from run to run; the parser ignores them.
sed -e "s|$tmp/py/||g" -e 's/timestamp="[^"]*"/timestamp="2024-01-01T00:00:00.000000"/' -e 's/hostname="[^"]*"/hostname="host"/' \
    "$tmp/py/junit.xml" > $d/junit_pytest.xml
perl $d/tap_sample.t > $d/tap_sample.txt 2>&1 || true
# Unity and testhelp fixtures: cJSON's and sds's own tests (repos/) with the
# bug of a corpus task applied, so the output holds failures.
for spec in cjson:cjson_hex4_upper_f:unity_cjson.txt sds:sds_range_negative_end:testhelp_sds.txt; do
    repo=${spec%%:*} rest=${spec#*:}
    task=${rest%%:*} out=${rest#*:}
    rm -rf "$tmp/$repo" && cp -r repos/$repo "$tmp/$repo"
    /usr/bin/python3 -c 'import json,sys; sys.stdout.write(json.load(open(sys.argv[1]))["bug"])' tasks/$task.json |
        (cd "$tmp/$repo" && patch -s -p1)
    (cd "$tmp/$repo" && make -s test > out.txt 2>/dev/null || true)
    cp "$tmp/$repo/out.txt" $d/$out
done
