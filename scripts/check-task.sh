#!/bin/sh
# check-task.sh TASKFILE - verifies one task by hand, with plain tools.
#
# Copies repos/<repo> to a temp dir, commits it, applies the task's bug,
# runs test_cmd and checks that every FAIL_TO_PASS test fails and every
# PASS_TO_PASS test passes; then applies the gold patch and checks that all
# of them pass. Prints one verdict line; exit 0 when the task is valid, 1
# when not, 2 on usage errors. Reads JSON with python3's json module (jq is
# not guaranteed). The real validator is `harness validate`; this script is
# an independent cross-check of the task files.
set -u

if [ $# -ne 1 ] || [ ! -f "$1" ]; then
    echo "usage: scripts/check-task.sh tasks/ID.json" >&2
    exit 2
fi

PY=/usr/bin/python3
TOP=$(cd "$(dirname "$0")/.." && pwd)
TASK=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
TMP=$(mktemp -d "${TMPDIR:-/tmp}/check-task.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM

# One field of the task as text (lists one item a line), or "" when absent.
field() {
    "$PY" -c 'import json,sys
v = json.load(open(sys.argv[1])).get(sys.argv[2], "")
print("\n".join(v) if isinstance(v, list) else v, end="")' "$TASK" "$1"
}

ID=$(field instance_id)
REPO=$(field repo)
CMD=$(field test_cmd)
FMT=$(field test_format)
RESULT_FILE=$(field test_result_file)
TIMEOUT=$(field timeout_s)
field bug > "$TMP/bug.diff"
field patch > "$TMP/patch.diff"

verdict() {  # verdict STATUS message...
    st=$1; shift
    echo "$st $ID: $*"
    [ "$st" = PASS ] && exit 0
    trap - EXIT INT TERM  # keep the work tree and outputs for a look
    exit 1
}

[ -n "$REPO" ] && [ -d "$TOP/repos/$REPO" ] || verdict FAIL "no repo folder repos/$REPO"
[ "$ID.json" = "$(basename "$TASK")" ] || verdict FAIL "instance_id does not match the file name"

# Upstream copy as a git repo (its .gitignore keeps build outputs out).
W="$TMP/work"
mkdir "$W" && cp -R "$TOP/repos/$REPO/." "$W/" || verdict FAIL "cannot copy repos/$REPO"
(
    cd "$W" && git init -q && git add -A &&
    git -c user.name=check -c user.email=check@localhost commit -qm upstream
) || verdict FAIL "git init/commit of upstream failed"
(cd "$W" && git clean -qfdx) >/dev/null 2>&1

# run_tests LABEL: runs test_cmd in the work tree, writes $TMP/LABEL.out and
# the parsed statuses to $TMP/LABEL.res (lines "name<TAB>status").
run_tests() {
    [ -n "$RESULT_FILE" ] && rm -f "$W/$RESULT_FILE"
    (cd "$W" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$TMP" LANG=C.UTF-8 \
        timeout "$TIMEOUT" /bin/sh -c "$CMD") > "$TMP/$1.out" 2>&1
    "$PY" - "$FMT" "$TMP/$1.out" "$W/$RESULT_FILE" > "$TMP/$1.res" <<'EOF'
import re, sys
fmt, out_path, result_path = sys.argv[1:4]
status = {}
def note(name, st):  # duplicated names keep the worst status
    order = ["pass", "skip", "fail", "error"]
    if name not in status or order.index(st) > order.index(status[name]):
        status[name] = st
text = open(out_path, errors="replace").read()
if fmt == "check":
    for line in text.splitlines():
        m = re.match(r"^.*?:\d+:([PFE]):[^:]*:([^:]+):\d+:", line)
        if m:
            note(m.group(2), {"P": "pass", "F": "fail", "E": "error"}[m.group(1)])
elif fmt == "tap":
    for line in text.splitlines():
        m = re.match(r"^(not ok|ok)\b\s*\d*\s*(?:- )?(.*)$", line)
        if not m:
            continue
        desc, st = m.group(2), "pass" if m.group(1) == "ok" else "fail"
        d = re.search(r"\s+#\s*(SKIP|TODO)\b.*$", desc, re.I)
        if d:
            desc, st = desc[:d.start()], "skip" if d.group(1).upper() == "SKIP" else st
        note(desc.strip(), st)
elif fmt == "junit":
    import xml.etree.ElementTree as ET
    try:
        root = ET.parse(result_path).getroot()
    except (OSError, ET.ParseError):
        root = None
    for tc in ([] if root is None else root.iter("testcase")):
        st = "pass"
        for child in tc:
            if child.tag in ("failure", "error"):
                st = "fail" if child.tag == "failure" else "error"
            elif child.tag == "skipped" and st == "pass":
                st = "skip"
        note(tc.get("name", ""), st)
for name, st in status.items():
    print(f"{name}\t{st}")
EOF
}

# expect LABEL: compares $TMP/LABEL.res with what the task says. At "base"
# FAIL_TO_PASS must fail (a test never reported counts as failed); at
# "gold" everything must pass. Prints the first mismatches, returns 1 on any.
expect() {
    "$PY" - "$TASK" "$TMP/$1.res" "$1" <<'EOF'
import json, sys
task = json.load(open(sys.argv[1]))
got = dict(l.rstrip("\n").split("\t", 1) for l in open(sys.argv[2]) if "\t" in l)
stage = sys.argv[3]
bad = []
for t in task["FAIL_TO_PASS"]:
    st = got.get(t, "missing")
    if (stage == "base") == (st == "pass"):
        bad.append(f"{t}={st}")
for t in task["PASS_TO_PASS"]:
    st = got.get(t, "missing")
    if st != "pass":
        bad.append(f"{t}={st}")
if bad:
    print(f"{stage}: " + ", ".join(bad[:5]) + (" ..." if len(bad) > 5 else ""))
    sys.exit(1)
EOF
}

[ -s "$TMP/bug.diff" ] || verdict FAIL "empty bug diff"
[ -s "$TMP/patch.diff" ] || verdict FAIL "empty patch diff"
(cd "$W" && git apply "$TMP/bug.diff") 2>"$TMP/apply.err" ||
    verdict FAIL "bug does not apply: $(head -n1 "$TMP/apply.err")"
run_tests base
msg=$(expect base) || verdict FAIL "$msg (output: $TMP/base.out)"

(cd "$W" && git clean -qfdx && git apply "$TMP/patch.diff") 2>"$TMP/apply.err" ||
    verdict FAIL "patch does not apply at base: $(head -n1 "$TMP/apply.err")"
run_tests gold
msg=$(expect gold) || verdict FAIL "$msg"

nf=$(field FAIL_TO_PASS | grep -c .)
np=$(field PASS_TO_PASS | grep -c .)
verdict PASS "base fails $nf FAIL_TO_PASS and passes $np PASS_TO_PASS; gold passes all"
