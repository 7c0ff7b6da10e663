#!/bin/sh
# grpo-probe.sh - which train tasks can the SFT policy sometimes fix?
#
#   scripts/grpo-probe.sh [CKPT] [SEEDS] [BATCH FLAGS...]
#       (default models/policy.safetensors, seeds 1-2)
#
# Runs the policy on every train task (temperature 0.8, 10 turns, one
# episode per seed) and prints the comma-separated ids of the tasks it
# passed at least once: the "train_tasks" of a GRPO config. A group of a
# task the policy never passes has zero reward variance and no gradient,
# so GRPO on a weak policy learns only from such tasks (offline difficulty
# filtering, as DAPO-style recipes do online). Tasks passed every time
# would be filtered too; at these policies' pass rates there are none.
# Flags after SEEDS go to `harness batch` and override the defaults
# (e.g. --max-turns 8 --max-context-tokens 3584 to match a config).
#
# Environment: FAMILY=DIR probes a generated family (DIR/tasks, DIR/repos;
# see scripts/family-gen.py) instead of tasks/ and repos/; OUT=DIR is the
# batch's folder (default runs/grpo-probe, or DIR/probe-train).
# About 20 minutes on 2 cores for two seeds of the main corpus, 23 for
# one seed of the 1,000 train tasks of a 200-repository family.
set -eu
cd "$(dirname "$0")/.."
CKPT=${1:-models/policy.safetensors}
SEEDS=${2:-1-2}
[ $# -gt 2 ] && shift 2 || set --
if [ -n "${FAMILY:-}" ]; then
    OUT=${OUT:-$FAMILY/probe-train}
    set -- --tasks-dir "$FAMILY/tasks" --repos-dir "$FAMILY/repos" "$@"
fi
OUT=${OUT:-runs/grpo-probe}

make -j2 >/dev/null
bin/harness batch --tasks split:train --policy "model:$CKPT" --seeds "$SEEDS" --temperature 0.8 \
    --max-turns 10 --out "$OUT" --progress plain "$@" >&2
# rows of the report's group table: | run | task | n | rewards | ...
awk -F'|' '$3 ~ /^ [a-z][a-z0-9_]* $/ && $5 ~ /^ [01](, [01])* $/ && $5 ~ /1/ { gsub(/ /, "", $3); print $3 }' "$OUT/summary.md" |
    sort -u | paste -sd, -
