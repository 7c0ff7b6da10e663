#!/bin/sh
# SFT data for the shipped checkpoint (issue 6): oracle trajectories of the
# train split, plus oracle trajectories of extra generated bugs (seed 2) in
# the training repositories, filtered by scripts/sft-filter.py (train split
# only, no bug identical to one of the corpus). Held-out oracle trajectories
# go to a separate file, used only for the eval loss.
# Outputs: results/sft-data/{train,extra,heldout}/trajectories.jsonl
set -eu
cd "$(dirname "$0")/.."
EXTRA=${EXTRA:-40}
W=${WORKERS:-2}
X=results/sft-data/extra-tasks
if [ ! -d "$X/generated" ]; then
  for r in base64 datelib ini leapyear pydate pysemver roman strutil utf8; do
    bin/harness gen --repo "$r" --count "$EXTRA" --seed 2 --out "$X/generated" --workers "$W" --progress plain
  done
  /usr/bin/python3 scripts/sft-filter.py tasks "$X"
fi
bin/harness batch --tasks split:train --policy oracle --workers "$W" --out results/sft-data/train --progress plain
bin/harness batch --tasks all --tasks-dir "$X" --policy oracle --workers "$W" --out results/sft-data/extra --progress plain
bin/harness batch --tasks split:heldout --policy oracle --workers "$W" --out results/sft-data/heldout --progress plain
