#!/bin/sh
# The SFT recipe of the shipped checkpoint, on the data of
# scripts/sft-data.sh (run it first), in four stages:
#   induction  configs/induction.json   from scratch, 1,800 steps of 8 on
#              random words repeated once (scripts/copy-data.py --kind
#              repeat), loss on every token: the induction-head phase
#              change comes at about step 1,500
#   stage 8    configs/sft-stage8.json  600 steps of 8: the train split
#              twice, the extra bugs and 600 repeat records (they keep the
#              induction circuit)
#   stage 9-10 configs/sft-stage9.json, configs/sft-stage10.json: 100
#              steps of 8 each on the train split, the extra bugs, 300
#              repeat records and the leapyear demonstration 40 times over,
#              so that the task of `make run` is memorized
# Stage 10 is the shipped models/policy.safetensors. About 1 h 40 min on a
# 2-core machine with the right OpenBLAS kernels (bin/grpo picks them:
# README, Known limits), 4-5x that without.
set -eu
cd "$(dirname "$0")/.."
D=runs/sft-data
R=runs/sft-run
mkdir -p "$R"
[ -f "$D/train/trajectories.jsonl" ] || { echo "sft-train: run scripts/sft-data.sh first" >&2; exit 1; }
/usr/bin/python3 scripts/copy-data.py --kind repeat --count 8000 --seed 3
bin/grpo sft --data "$D/repeat/trajectories.jsonl" --config configs/induction.json \
    --out "$R/induction.safetensors" --log "$R/induction-metrics.jsonl"
head -n 600 "$D/repeat/trajectories.jsonl" > "$R/repeat600.jsonl"
head -n 300 "$D/repeat/trajectories.jsonl" > "$R/repeat300.jsonl"
bin/grpo sft --data "$D/train/trajectories.jsonl,$D/train/trajectories.jsonl,$D/extra/trajectories.jsonl,$R/repeat600.jsonl" \
    --config configs/sft-stage8.json --out "$R/stage8.safetensors" --log "$R/stage8-metrics.jsonl"
grep -m 1 '"task":"leapyear"' "$D/train/trajectories.jsonl" > "$R/leap1.jsonl"
: > "$R/leap40.jsonl"
for i in $(seq 40); do cat "$R/leap1.jsonl" >> "$R/leap40.jsonl"; done
for s in 9 10; do
    bin/grpo sft --data "$D/train/trajectories.jsonl,$D/extra/trajectories.jsonl,$R/leap40.jsonl,$R/repeat300.jsonl" \
        --config "configs/sft-stage$s.json" --out "$R/stage$s.safetensors" --log "$R/stage$s-metrics.jsonl"
done
echo "sft-train: $R/stage10.safetensors is the shipped checkpoint"
[ "${STAGE11:-0}" = 1 ] || exit 0
# stage 11 (STAGE11=1; not the shipped checkpoint: held-out still 0/130
# and 0/120, leapyear 2/8; results/sft-heldout.md): the same mix with the
# second extra set ("more": 60 generated bugs per training repository, 236
# kept) and the leapyear demonstration 10x
head -n 10 "$R/leap40.jsonl" > "$R/leap10.jsonl"
bin/grpo sft --data "$D/train/trajectories.jsonl,$D/extra/trajectories.jsonl,$D/more/trajectories.jsonl,$R/leap10.jsonl,$R/repeat300.jsonl" \
    --config configs/sft-stage11.json --out "$R/stage11.safetensors" --log "$R/stage11-metrics.jsonl"
echo "sft-train: $R/stage11.safetensors"
