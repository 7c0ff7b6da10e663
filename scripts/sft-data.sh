#!/bin/sh
# SFT data for the shipped checkpoint: oracle trajectories of the
# train split, plus oracle trajectories of extra generated bugs in the
# training repositories, filtered by scripts/sft-filter.py (train split
# only, no bug identical to one of the corpus or of an earlier extra set).
# Two extra sets: "extra" (seed 2, EXTRA per repository, the data of stages
# 8-10) and "more" (seed 3, MORE per repository, added for stage 11).
# Held-out oracle trajectories go to a separate file, used only for the
# eval loss.
# Outputs: runs/sft-data/{train,extra,more,heldout}/trajectories.jsonl
set -eu
cd "$(dirname "$0")/.."
EXTRA=${EXTRA:-40}
MORE=${MORE:-60}
W=${WORKERS:-2}
D=runs/sft-data
REPOS="base64 datelib ini leapyear pydate pysemver roman strutil utf8"

extra_set() { # name, seed, count per repository, earlier task dirs to dedupe against
    name=$1 seed=$2 count=$3
    shift 3
    X=$D/$name-tasks
    if [ ! -d "$X/generated" ]; then
        for r in $REPOS; do
            bin/harness gen --repo "$r" --count "$count" --seed "$seed" --out "$X/generated" --workers "$W" --progress plain
        done
        /usr/bin/python3 scripts/sft-filter.py "$X" tasks "$@"
    fi
    bin/harness batch --tasks all --tasks-dir "$X" --policy oracle --workers "$W" --out "$D/$name" --progress plain
}

bin/harness batch --tasks split:train --policy oracle --workers "$W" --out "$D/train" --progress plain
extra_set extra 2 "$EXTRA"
extra_set more 3 "$MORE" "$D/extra-tasks"
bin/harness batch --tasks split:heldout --policy oracle --workers "$W" --out "$D/heldout" --progress plain
