#!/bin/sh
# grpo-family.sh - issue 7's experiment on the generated task family, end to end.
#
#   scripts/grpo-family.sh            (about 3 h on 2 cores)
#
# 1. generate the family: 200 training repositories (5 train bugs and 1
#    held-out bug each) and 12 held-out repositories (scripts/family-gen.py,
#    seed 2; about 13 min);
# 2. oracle episodes on the 1,000 train tasks: the SFT data (about 10 min);
# 3. SFT from the shipped checkpoint, configs/sft-family-l.json (23 min);
# 4. probe: the SFT policy once on every train task at the GRPO settings,
#    and twice more on the tasks of the rarer bug kinds; the tasks it
#    passes are GRPO's train tasks (23 + 15 min);
# 5. GRPO, configs/grpo-family-l3.json (groups balanced by bug kind) with
#    its train_tasks replaced by the probes' list, then SFT vs RL on
#    held-out bugs and held-out repositories (about 85 min):
#    results/grpo-family-l3.{json,md,svg}.
#
# Every stage is skipped when its output exists, so a killed run resumes.
# The committed results/grpo-family-l3.* came from the generator before
# test arrays got guards (results/family.md): a rerun makes other tasks.
# Intermediate outputs live in results/family-l/ (not committed).
set -eu
cd "$(dirname "$0")/.."
F=results/family-l
W=${WORKERS:-2}
make -j2 >/dev/null
[ -d "$F/tasks" ] || /usr/bin/python3 scripts/family-gen.py "$F" --repos 200 --heldout-repos 12 --seed 2
bin/harness batch --tasks-dir "$F/tasks" --repos-dir "$F/repos" --workers "$W" --progress plain \
    --tasks split:train --policy oracle --out "$F/oracle-train"
[ -f "$F/sft.safetensors" ] ||
    bin/grpo sft --data "$F/oracle-train/trajectories.jsonl" --config configs/sft-family-l.json \
        --out "$F/sft.safetensors" --log "$F/sft-log.jsonl"
EP="--prompt v2 --think on --history keep --max-turns 8 --max-context-tokens 3584 --max-wall 300 --obs-budget 8000"
# shellcheck disable=SC2086 # EP is a list of flags
ids=$(FAMILY=$F OUT=$F/probe-train scripts/grpo-probe.sh "$F/sft.safetensors" 1 $EP)
# the kinds other than the commonest (flip_cmp) pass too rarely to show up
# in one seed: two more seeds on those tasks
rare=$(/usr/bin/python3 - "$F/tasks/generated" <<'PY'
import collections, glob, json, sys
kinds = {}
for f in glob.glob(sys.argv[1] + "/*/*.json"):
    t = json.load(open(f))
    if t["split"] == "train":
        kinds[t["instance_id"]] = t["generator"]["mutation"]
top = collections.Counter(kinds.values()).most_common(1)[0][0]
print(",".join(sorted(i for i, k in kinds.items() if k != top)))
PY
)
# shellcheck disable=SC2086
ids2=$(FAMILY=$F OUT=$F/probe-train2 scripts/grpo-probe.sh "$F/sft.safetensors" 2-3 $EP --tasks "$rare")
ids=$(printf '%s,%s\n' "$ids" "$ids2" | tr , '\n' | sed '/^$/d' | sort -u | paste -sd, -)
if [ -z "$ids" ]; then
    echo "grpo-family: the SFT policy passed no train task in the probe: nothing for GRPO to learn from" >&2
    exit 1
fi
# a kind with a single probed task would get its own share of every
# round (balance "mutation") from that one task: leave such kinds out
ids=$(/usr/bin/python3 - "$F/tasks/generated" "$ids" <<'PY'
import collections, json, sys
ids = sys.argv[2].split(",")
kind = {i: json.load(open(f"{sys.argv[1]}/{i.split('__')[0]}/{i}.json"))["generator"]["mutation"] for i in ids}
n = collections.Counter(kind.values())
print(",".join(i for i in ids if n[kind[i]] > 1))
PY
)
sed "s/\"train_tasks\": *\"[^\"]*\"/\"train_tasks\": \"$ids\"/" configs/grpo-family-l3.json > "$F/grpo.json"
scripts/grpo-experiment.sh "$F/grpo.json"
