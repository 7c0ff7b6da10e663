#!/bin/sh
# Localizing demonstrations: scripts/local-demos.py rewrites the
# oracle trajectories of scripts/sft-data.sh into run_tests -> search the
# enclosing function -> read its lines -> edit -> run_tests -> submit, and
# each rewritten plan is run for real through the replay policy.
# Outputs: runs/sft-data/local-{train,extra,more,heldout}/trajectories.jsonl
set -eu
cd "$(dirname "$0")/.."
D=runs/sft-data
W=${WORKERS:-2}
for s in train extra more heldout; do
    case $s in
        extra | more) tdir=$D/$s-tasks ;;
        *) tdir=tasks ;;
    esac
    P=$D/local-$s-plans
    O=$D/local-$s
    [ -f "$O/trajectories.jsonl" ] && continue
    /usr/bin/python3 scripts/local-demos.py "$D/$s/trajectories.jsonl" "$P"
    ls "$P" | sed 's/\.jsonl$//' | xargs -P "$W" -I{} \
        bin/harness batch --tasks {} --tasks-dir "$tdir" --policy "replay:$P/{}.jsonl" \
        --workers 1 --out "$O.parts/{}" --progress plain >/dev/null 2>&1
    cat "$O".parts/*/trajectories.jsonl > "$O.tmp" && mkdir -p "$O" && mv "$O.tmp" "$O/trajectories.jsonl"
    rm -rf "$O.parts"
    echo "$s: $(grep -c '"reward":1[,}]' "$O/trajectories.jsonl") of $(wc -l < "$O/trajectories.jsonl") pass"
done
