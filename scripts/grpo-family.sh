#!/bin/sh
# grpo-family.sh - the GRPO experiment on a generated task family, end to end.
#
#   scripts/grpo-family.sh            (about 2 h 30 min on 2 cores)
#   VARIANT=g scripts/grpo-family.sh  (another recipe; list below)
#
# The default, VARIANT=sk, is the experiment whose report is committed as
# results/grpo-experiment.{json,md,svg}:
# 1. generate the family: 200 training repositories (5 train bugs and 1
#    held-out bug each) and 12 held-out repositories (scripts/family-gen.py,
#    seed 2; about 13 min);
# 2. oracle episodes on the 1,000 train tasks (about 10 min); SFT from the
#    shipped checkpoint on those of fam000-fam099 only (22 min);
# 3. probe: the SFT policy twice (seeds 1-2) on the 500 train tasks of
#    fam100-fam199, code it never read (22 min), then twice more (seeds
#    3-4) on the 325 of them whose bug is a flipped comparison (16 min);
# 4. GRPO on the flipped-comparison tasks passed in any probe seed (the
#    config's train_tasks replaced by that list; 28 tasks, 36 steps, 51
#    min), then SFT vs RL on held-out bugs and held-out repositories (19
#    min), reported in runs/grpo-experiment.{json,md,svg}. The other
#    variants report in runs/grpo-family-<variant>.*.
#
# Variants (VARIANT=sk, the default, g, r, h, hc or s):
#   g  plain oracle demonstrations, SFT on all 1,000, one probe seed on
#      all train tasks, GRPO on the tasks passed (configs/sft-family-l.json,
#      configs/grpo-family-g.json), in runs/family-g/;
#   r  oracle:recover=50: half the demonstrations first fail an edit and
#      repair it from edit_file's hint (policy/oracle.c); SFT masks the
#      failed turns (configs/sft-family-r.json), configs/grpo-family-r.json,
#      in runs/family-r/;
#   h  g's demonstrations and SFT, but the probe, GRPO and the evaluation
#      run with edit_file's hints on (configs/grpo-family-h.json), in
#      runs/family-h/: does the plain SFT policy, never taught to retry,
#      use the hint (before or after GRPO)?
#   hc h's SFT policy and probe (shared, in runs/family-h/), but GRPO
#      trains on at most 2 of the probe's passed tasks per fix string
#      (scripts/probe-cap.py): under h, GRPO learned to apply one edit,
#      `= 1;` -> `= 0;`, to every bug (results/grpo-family-h.md).
#   s  g with the training repositories split between the stages: SFT
#      sees the oracle demonstrations of fam000-fam099 only, and the probe
#      (2 seeds) and GRPO use the train tasks of fam100-fam199, whose code
#      the SFT policy has never read. Under g the SFT policy had memorized
#      every training file, and GRPO rewarded recalling a fix rather than
#      reading one from the context (in runs/family-s/, with configs/
#      grpo-family-s.json).
#   sk s's SFT policy and probe (shared, in runs/family-s/), two more
#      probe seeds (3-4) on the fam100-fam199 train tasks whose bug is a
#      flipped comparison, and GRPO on the flipped-comparison tasks passed
#      in any of the four seeds (scripts/task-kind.py, configs/
#      grpo-family-sk.json). Flipped comparisons are 54 of the 72 held-out-
#      repository tasks; under s, GRPO learned the off-by-one edit `= 1;`
#      -> `= 0;`, which repairs none of them. The report is named
#      grpo-experiment (final.name in configs/grpo-family-sk.json).
#
# Every stage is skipped when its output exists, so a killed run resumes.
# GRPO trains on the tasks the probe passed, without balancing by bug
# kind, on a generator whose test arrays carry guard elements
# (scripts/family-gen.py). Intermediate outputs live in
# runs/family-<variant>/ (ignored by git).
set -eu
cd "$(dirname "$0")/.."
W=${WORKERS:-2}
CAP=
SPLIT=
KIND=
V=${VARIANT:-sk}
case "$V" in
g) F=runs/family-g ORACLE=oracle SFT=configs/sft-family-l.json GRPO=configs/grpo-family-g.json HINTS=off ;;
r) F=runs/family-r ORACLE=oracle:recover=50 SFT=configs/sft-family-r.json GRPO=configs/grpo-family-r.json HINTS=on ;;
h) F=runs/family-h ORACLE=oracle SFT=configs/sft-family-l.json GRPO=configs/grpo-family-h.json HINTS=on ;;
hc) F=runs/family-h ORACLE=oracle SFT=configs/sft-family-l.json GRPO=configs/grpo-family-hc.json HINTS=on CAP=2 ;;
s) F=runs/family-s ORACLE=oracle SFT=configs/sft-family-l.json GRPO=configs/grpo-family-s.json HINTS=off SPLIT=1 ;;
sk) F=runs/family-s ORACLE=oracle SFT=configs/sft-family-l.json GRPO=configs/grpo-family-sk.json HINTS=off SPLIT=1 KIND=flip_cmp ;;
*) echo "grpo-family: VARIANT is '$V': expected sk, g, r, h, hc or s" >&2; exit 2 ;;
esac
make -j2 >/dev/null
[ -d "$F/tasks" ] || /usr/bin/python3 scripts/family-gen.py "$F" --repos 200 --heldout-repos 12 --seed 2
bin/harness batch --tasks-dir "$F/tasks" --repos-dir "$F/repos" --workers "$W" --progress plain \
    --tasks split:train --policy "$ORACLE" --edit-hints "$HINTS" --out "$F/oracle-train"
DATA=$F/oracle-train/trajectories.jsonl
PROBE=split:train SEEDS=1
if [ -n "$SPLIT" ]; then
    # SFT on the repositories fam000-fam099, the probe and GRPO on fam100-fam199
    grep -E '"task":[[:space:]]*"fam0[0-9][0-9]__' "$DATA" > "$F/oracle-sft.jsonl.tmp"
    mv "$F/oracle-sft.jsonl.tmp" "$F/oracle-sft.jsonl"
    DATA=$F/oracle-sft.jsonl
    PROBE=$(bin/harness list --tasks-dir "$F/tasks" --repos-dir "$F/repos" --split train |
        awk '$1 ~ /^fam1[0-9][0-9]__/ { print $1 }' | paste -sd, -)
    SEEDS=1-2
fi
[ -f "$F/sft.safetensors" ] ||
    bin/grpo sft --data "$DATA" --config "$SFT" --out "$F/sft.safetensors" --log "$F/sft-log.jsonl"
EP="--prompt v2 --think on --history keep --max-turns 8 --max-context-tokens 3584 --max-wall 300 --obs-budget 8000 --edit-hints $HINTS"
# shellcheck disable=SC2086 # EP is a list of flags
ids=$(FAMILY=$F OUT=$F/probe-train scripts/grpo-probe.sh "$F/sft.safetensors" "$SEEDS" $EP --tasks "$PROBE")
if [ -z "$ids" ]; then
    echo "grpo-family: the SFT policy passed no train task in the probe: nothing for GRPO to learn from" >&2
    exit 1
fi
if [ -n "$KIND" ]; then
    # shellcheck disable=SC2086
    more=$(FAMILY=$F OUT=$F/probe-train-$KIND scripts/grpo-probe.sh "$F/sft.safetensors" 3-4 $EP \
        --tasks "$(/usr/bin/python3 scripts/task-kind.py "$F/tasks" "$KIND" "$PROBE")")
    ids=$(/usr/bin/python3 scripts/task-kind.py "$F/tasks" "$KIND" "$ids,$more" | tr , '\n' | sort -u | paste -sd, -)
    [ -n "$ids" ] || { echo "grpo-family: the probe passed no $KIND task" >&2; exit 1; }
fi
[ -z "$CAP" ] || ids=$(/usr/bin/python3 scripts/probe-cap.py "$F/probe-train/trajectories.jsonl" "$CAP")
# the merged config (an "extends" chain resolved) with the probe's tasks
G=$F/grpo-$V.json
bin/grpo train --config "$GRPO" --check |
    sed "s/\"train_tasks\":[[:space:]]*\"[^\"]*\"/\"train_tasks\": \"$ids\"/" > "$G"
scripts/grpo-experiment.sh "$G"
