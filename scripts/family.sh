#!/bin/sh
# family.sh - the task-family probe of results/family.md in one command:
# generate the family, oracle episodes per split (SFT data and eval loss),
# SFT from the shipped checkpoint, then the SFT policy on the 240 tasks of
# the training repositories at the GRPO experiment's episode settings.
# About 30 min on 2 cores. Outputs in runs/family/ (ignored by git).
set -eu
cd "$(dirname "$0")/.."
F=runs/family
W=${WORKERS:-2}
make -j2 >/dev/null
[ -d "$F/tasks" ] || /usr/bin/python3 scripts/family-gen.py "$F"
fam() { bin/harness batch --tasks-dir "$F/tasks" --repos-dir "$F/repos" --workers "$W" --progress plain "$@"; }
fam --tasks split:train --policy oracle --out "$F/oracle-train"
fam --tasks split:heldout --policy oracle --out "$F/oracle-heldout"
[ -f "$F/sft.safetensors" ] ||
    bin/grpo sft --data "$F/oracle-train/trajectories.jsonl" --config configs/sft-family.json \
        --out "$F/sft.safetensors" --log "$F/sft-log.jsonl"
fam --tasks 'fam0[0-3]*' --policy "model:$F/sft.safetensors" --temperature 0.7 --max-turns 8 \
    --max-context-tokens 3584 --obs-budget 8000 --out "$F/probe"
