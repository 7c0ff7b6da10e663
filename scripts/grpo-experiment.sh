#!/bin/sh
# grpo-experiment.sh - one GRPO run and its SFT-vs-RL report.
#
#   scripts/grpo-experiment.sh [CONFIG]     (default configs/grpo-main.json)
#
# The family experiment end to end (task family, SFT, probe, then this with
# configs/grpo-family-sk.json) is scripts/grpo-family.sh.
#
# Starts from the SFT checkpoint the config names (models/policy.safetensors),
# trains GRPO on the train split, then evaluates the SFT and the RL policy on
# the held-out bugs of the training repositories and on the held-out
# repositories (at least 100 episodes each) and writes <results>/<name>.json,
# <results>/<name>.md and the SVG figures (final.results, runs/ in the
# committed configs, and final.name). Running it again after a kill
# resumes the run from its last checkpoint; after the last step it only
# rewrites the report. Budget on a 2-core machine: see the config (steps,
# tasks_per_step x group_size episodes per step).
set -eu
cd "$(dirname "$0")/.."
CONFIG=${1:-configs/grpo-main.json}

make -j2 >/dev/null

# the config as the trainer reads it (an "extends" chain merged)
merged=$(bin/grpo train --config "$CONFIG" --check)
field() { printf '%s\n' "$merged" | sed -n "s/^[[:space:]]*\"$1\":[[:space:]]*\"\([^\"]*\)\".*/\1/p" | head -n 1; }
init=$(field init)
out=$(field out)
if [ -n "$init" ] && [ ! -f "$init" ]; then
    echo "grpo-experiment: $init is missing: train the SFT checkpoint first (bin/grpo sft ...)" >&2
    exit 1
fi

if [ -f "$out/ckpt/latest" ]; then
    echo "grpo-experiment: resuming $out" >&2
    bin/grpo train --config "$CONFIG" --resume "$out"
else
    bin/grpo train --config "$CONFIG"
fi
