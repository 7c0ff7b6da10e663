#!/bin/sh
# cli-doc.sh - writes docs/cli.md from the binaries' own --help texts, so
# that the reference and the commands cannot drift apart (tests/test_docs.c
# checks that every --help text stands in docs/cli.md verbatim).
# Usage: scripts/cli-doc.sh [BINDIR] > docs/cli.md
set -eu
bin=${1:-bin}
cat <<'HEAD'
# Command-line reference

Three binaries: `bin/harness` (tasks, episodes, batches, reports, the
sandbox), `bin/grpo` (tokenizer, model, SFT and GRPO training) and
`bin/sbx` (the sandbox command alone, which `harness exec` runs). Each
section below is the command's own `--help` text. Exit codes everywhere: 0
ok, 1 the run or validation failed, 2 usage error.

HEAD
for tool in harness grpo; do
    echo "## $tool"
    echo
    echo '```'
    "$bin/$tool" --help
    echo '```'
    echo
    for cmd in $("$bin/$tool" --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}'); do
        echo "### $tool $cmd"
        echo
        echo '```'
        "$bin/$tool" "$cmd" --help 2>&1
        echo '```'
        echo
    done
done
echo "## sbx"
echo
echo '```'
"$bin/sbx" --help
echo '```'
echo
cat <<'TAIL'
## Scripts

| script | what it does |
|---|---|
TAIL
# Each script's summary: the first lines of its header comment (shell) or
# docstring (Python), up to a blank line, joined, and cut at the first
# ". ", "? " or ": ".
for f in scripts/*.sh scripts/*.py; do
    what=$(awk 'NR == 1 && /^#!/ { next }
        !on && /^#/ { on = "#" } !on && /^"""/ { on = "\"" }
        on == "#" { if ($0 !~ /^#/ || $0 ~ /^# *$/) exit; sub(/^# */, "") }
        on == "\"" { if ($0 ~ /^ *$/) exit; sub(/^""" */, ""); sub(/"""$/, "") }
        on { t = t (t == "" ? "" : " ") $0 }
        END {
            n = length(t) + 1
            split(".|?|:", ends, "|")
            for (k in ends) { i = index(t, ends[k] " "); if (i && i < n) { n = i; c = ends[k] } }
            print substr(t, 1, n - 1) (c == ":" ? "" : c)
        }' "$f" | sed 's/|/\\|/g')
    echo "| \`$f\` | $what |"
done
